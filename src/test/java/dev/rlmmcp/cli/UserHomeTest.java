package dev.rlmmcp.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UserHomeTest {

    private static final Path PASSWD_HOME = Path.of(System.getProperty("user.home"));

    @Test
    void homeIsTheEnvironmentsHomeNotThePasswdEntry() {
        assertThat(UserHome.home(Map.of("HOME", "/srv/alice"))).isEqualTo(Path.of("/srv/alice"));
        assertThat(UserHome.dataHome(Map.of("HOME", "/srv/alice"))).isEqualTo(Path.of("/srv/alice/.local/share"));
        assertThat(StateDirectories.root(Map.of("HOME", "/srv/alice")))
                .isEqualTo(Path.of("/srv/alice/.local/share/rlm-mcp"));
    }

    @Test
    void xdgDataHomeWinsOverHomeWhenAbsolute() {
        Map<String, String> env = Map.of("HOME", "/srv/alice", "XDG_DATA_HOME", "/data/xdg");
        assertThat(StateDirectories.root(env)).isEqualTo(Path.of("/data/xdg/rlm-mcp"));
        assertThat(StateDirectories.root(Map.of("HOME", "/srv/alice", "XDG_DATA_HOME", "relative/xdg")))
                .isEqualTo(Path.of("/srv/alice/.local/share/rlm-mcp"));
        assertThat(UserHome.cacheHome(Map.of("HOME", "/srv/alice"))).isEqualTo(Path.of("/srv/alice/.cache"));
        assertThat(UserHome.cacheHome(Map.of("HOME", "/srv/alice", "XDG_CACHE_HOME", "/c")))
                .isEqualTo(Path.of("/c"));
    }

    @Test
    void anUnsetBlankOrRelativeHomeFallsBackToThePasswdEntry() {
        assertThat(UserHome.home(Map.of())).isEqualTo(PASSWD_HOME);
        assertThat(UserHome.home(Map.of("HOME", " "))).isEqualTo(PASSWD_HOME);
        assertThat(UserHome.home(Map.of("HOME", "home"))).isEqualTo(PASSWD_HOME);
    }
}
