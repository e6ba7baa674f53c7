package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class ReadOnlyBindsTest {

    private static final List<String> SYSTEM = List.of("/bin", "/lib");

    private static List<String> args(String... dirs) {
        return ReadOnlyBinds.args(java.util.Arrays.stream(dirs).map(Path::of).toList(), SYSTEM);
    }

    @Test
    void everyParentIsMadeReadableBeforeTheBind() {
        assertThat(args("/srv/x/data"))
                .containsExactly(
                        "--perms",
                        "0755",
                        "--dir",
                        "/srv",
                        "--perms",
                        "0755",
                        "--dir",
                        "/srv/x",
                        "--ro-bind",
                        "/srv/x/data",
                        "/srv/x/data");
    }

    @Test
    void sharedParentsAreMadeOnce() {
        assertThat(args("/root/.pyenv/versions/3.11.7", "/root/projects/data"))
                .containsExactly(
                        "--perms",
                        "0755",
                        "--dir",
                        "/root",
                        "--perms",
                        "0755",
                        "--dir",
                        "/root/.pyenv",
                        "--perms",
                        "0755",
                        "--dir",
                        "/root/.pyenv/versions",
                        "--ro-bind",
                        "/root/.pyenv/versions/3.11.7",
                        "/root/.pyenv/versions/3.11.7",
                        "--perms",
                        "0755",
                        "--dir",
                        "/root/projects",
                        "--ro-bind",
                        "/root/projects/data",
                        "/root/projects/data");
    }

    @Test
    void aDirectoryInsideAnotherIsNotBoundAgainWhateverTheOrder() {
        List<String> args =
                args("/home/u/proj/.venv", "/home/u/proj", "/home/u/proj/.venv/lib/python3.12/site-packages");
        assertThat(args)
                .containsExactly(
                        "--perms",
                        "0755",
                        "--dir",
                        "/home",
                        "--perms",
                        "0755",
                        "--dir",
                        "/home/u",
                        "--ro-bind",
                        "/home/u/proj",
                        "/home/u/proj");
    }

    @Test
    void noBindHidesAnotherAndNoDirIsMadeInsideABind() {
        List<String> args = args("/b/c/d", "/a", "/b/c", "/a/x/y", "/b/e");
        for (int i = 0; i < args.size(); i++) {
            if (args.get(i).equals("--dir") || args.get(i).equals("--ro-bind")) {
                Path target = Path.of(args.get(i).equals("--dir") ? args.get(i + 1) : args.get(i + 2));
                for (int j = 0; j < i; j++) {
                    if (args.get(j).equals("--ro-bind")) {
                        assertThat(target.startsWith(Path.of(args.get(j + 2))))
                                .as(target + " after a bind of " + args.get(j + 2))
                                .isFalse();
                    }
                }
            }
        }
        assertThat(args)
                .containsSubsequence("--ro-bind", "/a", "/a")
                .containsSubsequence("--ro-bind", "/b/c", "/b/c")
                .containsSubsequence("--ro-bind", "/b/e", "/b/e")
                .doesNotContain("/b/c/d", "/a/x/y");
    }

    @Test
    void dirsTheSandboxShowsAlreadyAreSkipped() {
        assertThat(args("/usr/lib/python3.11", "/usr", "/lib/python3/dist-packages", "/bin"))
                .isEmpty();
    }

    @Test
    void pathsAreNormalised() {
        assertThat(args("/srv/x/../x/data/")).containsSubsequence("--ro-bind", "/srv/x/data", "/srv/x/data");
    }
}
