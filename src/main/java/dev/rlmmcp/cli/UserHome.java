package dev.rlmmcp.cli;

import java.nio.file.Path;
import java.util.Map;

/**
 * The user's home and data directories as a shell sees them: {@code $HOME} first, as every CLI does (a
 * user or a test that sets it expects the server to follow), and the passwd entry (Java's
 * {@code user.home}) only where {@code HOME} is unset, blank or relative.
 */
final class UserHome {

    private UserHome() {}

    static Path home(Map<String, String> env) {
        String home = env.get("HOME");
        return home != null && !home.isBlank() && Path.of(home).isAbsolute()
                ? Path.of(home)
                : Path.of(System.getProperty("user.home"));
    }

    /** {@code $XDG_DATA_HOME} when absolute (the XDG spec ignores a relative one), else {@code ~/.local/share}. */
    static Path dataHome(Map<String, String> env) {
        return xdg(env, "XDG_DATA_HOME", home(env).resolve(".local").resolve("share"));
    }

    /** {@code $XDG_CACHE_HOME} when absolute, else {@code ~/.cache}. */
    static Path cacheHome(Map<String, String> env) {
        return xdg(env, "XDG_CACHE_HOME", home(env).resolve(".cache"));
    }

    private static Path xdg(Map<String, String> env, String name, Path otherwise) {
        String dir = env.get(name);
        return dir != null && !dir.isBlank() && Path.of(dir).isAbsolute() ? Path.of(dir) : otherwise;
    }
}
