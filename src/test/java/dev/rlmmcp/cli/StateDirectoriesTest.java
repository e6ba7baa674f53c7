package dev.rlmmcp.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirectoriesTest {

    @TempDir
    Path dir;

    private final java.util.List<StateDirectories.Chosen> held = new java.util.ArrayList<>();

    @AfterEach
    void release() throws IOException {
        for (StateDirectories.Chosen c : held) {
            c.lock().release();
        }
    }

    private StateDirectories.Chosen keep(StateDirectories.Chosen chosen) {
        held.add(chosen);
        return chosen;
    }

    @Test
    void eachDataRootHasItsOwnDirectoryNamedAfterItAndKeyedByItsCanonicalPath() throws IOException {
        Path root = dir.resolve("state");
        Path a = Files.createDirectories(dir.resolve("work/project-a"));
        Path b = Files.createDirectories(dir.resolve("other/project-a"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), a);
        Path forA = StateDirectories.forProject(root, a);
        assertThat(forA.getParent()).isEqualTo(root.resolve("projects"));
        assertThat(forA.getFileName().toString()).matches("project-a-[0-9a-f]{10}");
        assertThat(StateDirectories.forProject(root, b)).isNotEqualTo(forA);
        assertThat(StateDirectories.forProject(root, link)).isEqualTo(forA);
        assertThat(StateDirectories.forProject(root, a.resolve("../project-a"))).isEqualTo(forA);
        assertThat(StateDirectories.forProject(root, Path.of("/")).getFileName().toString())
                .startsWith("root-");
    }

    @Test
    void anExplicitStateDirInUseIsRefusedInOneLineNamingTheHolder() {
        Path state = dir.resolve("explicit");
        StateDirectories.Chosen first = keep(StateDirectories.explicit(state));
        assertThat(first.directory()).isEqualTo(state);
        assertThat(state.resolve("server.lock"))
                .content()
                .isEqualToIgnoringNewLines(Long.toString(ProcessHandle.current().pid()));
        assertThatThrownBy(() -> StateDirectories.explicit(state))
                .isInstanceOf(StateDirectories.StartRefused.class)
                .hasMessageContaining(state.toString())
                .hasMessageContaining("pid " + ProcessHandle.current().pid())
                .hasMessageContaining("--state-dir")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void aSecondServerForAProjectTakesItsNextDirectoryAndTheFirstIsFreeAgainAfterwards() throws IOException {
        Path root = dir.resolve("state");
        Path project = Files.createDirectories(dir.resolve("p"));
        StateDirectories.Chosen first = StateDirectories.byDefault(root, project);
        StateDirectories.Chosen second = keep(StateDirectories.byDefault(root, project));
        assertThat(first.directory()).isEqualTo(StateDirectories.forProject(root, project));
        assertThat(second.directory().getFileName().toString())
                .isEqualTo(first.directory().getFileName() + "-2");
        first.lock().release();
        assertThat(keep(StateDirectories.byDefault(root, project)).directory()).isEqualTo(first.directory());
    }
}
