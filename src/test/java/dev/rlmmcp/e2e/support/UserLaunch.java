package dev.rlmmcp.e2e.support;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * How a user starts the server: the launcher script {@code bin/rlm-mcp} (never {@code java -jar}), from a
 * working directory, with the user's environment, optionally as another (non-root) user. No flag is added:
 * whatever the test does not pass is the server's default (sandbox, data root, state directory).
 *
 * @param launcher  the {@code bin/rlm-mcp} to run
 * @param cwd       the directory the server starts in (its default data root)
 * @param env       variables set on top of the environment (a null value removes the variable)
 * @param user      run as this user with a login-like environment of its own (null: as the test's user,
 *                  with the test's environment)
 * @param userHome  that user's home directory (HOME of its environment)
 */
public record UserLaunch(Path launcher, Path cwd, Map<String, String> env, String user, Path userHome) {

    /** The checkout's launcher, run as the test's own user in {@code cwd}. */
    public static UserLaunch here(Path cwd, Map<String, String> env) {
        return new UserLaunch(McpDriver.projectRoot().resolve("bin/rlm-mcp"), cwd, env, null, null);
    }

    public UserLaunch with(String name, String value) {
        Map<String, String> more = new LinkedHashMap<>(env);
        more.put(name, value);
        return new UserLaunch(launcher, cwd, more, user, userHome);
    }

    /**
     * The command line, usable by any spawner (the MCP driver spawns stdio servers itself): {@code env -C cwd}
     * sets the working directory and the variables; as another user, {@code setpriv} drops to that user
     * first and {@code env -i} gives it its own environment, as a login would.
     */
    public List<String> command(List<String> args) {
        List<String> command = new ArrayList<>();
        if (user != null) {
            command.addAll(List.of("setpriv", "--reuid=" + user, "--regid=" + user, "--init-groups"));
            command.addAll(List.of("env", "-i", "-C", cwd.toString()));
            command.add("HOME=" + userHome);
            command.add("USER=" + user);
            command.add("LOGNAME=" + user);
            command.add("PATH=/usr/local/bin:/usr/bin:/bin");
            command.add("LANG=C.UTF-8");
            command.add("JAVA_HOME=" + System.getProperty("java.home"));
            command.add("RLM_MCP_DISCOVERY=false");
        } else {
            command.addAll(List.of("env", "-C", cwd.toString()));
        }
        env.forEach((k, v) -> {
            if (v == null) {
                command.addAll(List.of("-u", k));
            }
        });
        env.forEach((k, v) -> {
            if (v != null) {
                command.add(k + "=" + v);
            }
        });
        command.add(launcher.toString());
        command.addAll(args);
        return command;
    }
}
