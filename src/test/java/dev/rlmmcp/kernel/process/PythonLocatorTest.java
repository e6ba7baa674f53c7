package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PythonLocatorTest {

    @TempDir
    Path dir;

    @Test
    void parsesTheProbeAfterNoiseFromStartUpFiles() {
        String out =
                "hello from sitecustomize\n/v/bin/python\n3.12.3 (main, Apr 1 2024) [GCC 13]\n3.12.3\n/opt/py\0/v\n"
                        + "/opt/py/lib/python3.12\0/v/lib/python3.12/site-packages\n";
        PythonLocator.Python python = PythonLocator.parse(out, "python3");
        assertThat(python.executable()).isEqualTo(Path.of("/v/bin/python"));
        assertThat(python.version()).isEqualTo("3.12.3");
        assertThat(python.build()).isEqualTo("3.12.3 (main, Apr 1 2024) [GCC 13]");
        assertThat(python.prefixes()).containsExactly(Path.of("/opt/py"), Path.of("/v"));
        assertThat(python.searchPath())
                .containsExactly(Path.of("/opt/py/lib/python3.12"), Path.of("/v/lib/python3.12/site-packages"));
    }

    @Test
    void anotherBuildOfTheSameReleaseIsNotTheSame() {
        PythonLocator.Python configured = new PythonLocator.Python(
                Path.of("/v/bin/python"), "3.11.7", "3.11.7 (main)", List.of(Path.of("/p"), Path.of("/v")), List.of());
        PythonLocator.Python system = new PythonLocator.Python(
                Path.of("/v/bin/python"), "3.11.2", "3.11.2 (main)", List.of(Path.of("/usr")), List.of());
        assertThat(configured.sameAs(configured)).isTrue();
        assertThat(configured.sameAs(system)).isFalse();
    }

    /** A venv's bin/python links to python3, which links to the base interpreter elsewhere. */
    @Test
    void readableDirsFollowTheExecutablesLinksToTheRealBinary() throws Exception {
        Path base = Files.createDirectories(dir.resolve("pyenv/versions/3.11.7/bin"));
        Files.writeString(base.resolve("python3.11"), "");
        Files.createSymbolicLink(base.resolve("python3"), Path.of("python3.11"));
        Path venv = Files.createDirectories(dir.resolve("venv/bin"));
        Files.createSymbolicLink(venv.resolve("python3"), base.resolve("python3"));
        Files.createSymbolicLink(venv.resolve("python"), Path.of("python3"));
        PythonLocator.Python python = new PythonLocator.Python(
                venv.resolve("python"), "3.11.7", "b", List.of(dir.resolve("venv")), List.of());
        assertThat(python.readableDirs()).contains(dir.resolve("venv"), venv.toRealPath(), base.toRealPath());
    }

    @Test
    void aVenvKeepsItsOwnExecutable() throws Exception {
        String running = ProcessHandle.current().info().command().orElseThrow();
        assertThat(running).isNotEmpty();
        Path venv = dir.resolve("venv");
        Process make = new ProcessBuilder("python3", "-m", "venv", "--without-pip", venv.toString())
                .inheritIO()
                .start();
        org.junit.jupiter.api.Assumptions.assumeTrue(make.waitFor() == 0, "python3 -m venv is not available");
        PythonLocator.Python python =
                PythonLocator.locate(venv.resolve("bin/python").toString());
        assertThat(python.executable()).isEqualTo(venv.resolve("bin/python"));
        assertThat(python.prefixes()).contains(venv);
        assertThat(python.searchPath()).anyMatch(p -> p.startsWith(venv) && p.endsWith("site-packages"));
    }
}
