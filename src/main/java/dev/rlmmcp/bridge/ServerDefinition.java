package dev.rlmmcp.bridge;

import java.util.List;
import java.util.Map;

/**
 * One MCP server another client configured, as found in a config file: a stdio server
 * ({@code command}, {@code args}, {@code env}) or an HTTP server ({@code url}, {@code headers}).
 * Env values and headers may be secrets: {@link #toString()} never shows them, and they never
 * reach a kernel.
 */
public record ServerDefinition(
        String name,
        String command,
        List<String> args,
        Map<String, String> env,
        String url,
        Map<String, String> headers,
        String source) {

    public ServerDefinition {
        args = List.copyOf(args);
        env = Map.copyOf(env);
        headers = Map.copyOf(headers);
    }

    public static ServerDefinition stdio(
            String name, String command, List<String> args, Map<String, String> env, String source) {
        return new ServerDefinition(name, command, args, env, null, Map.of(), source);
    }

    public static ServerDefinition http(String name, String url, Map<String, String> headers, String source) {
        return new ServerDefinition(name, null, List.of(), Map.of(), url, headers, source);
    }

    public boolean isHttp() {
        return url != null;
    }

    /**
     * How the server is reached, for logs and error messages: the command (its arguments may hold
     * tokens, so only their number), or the URL without its query.
     */
    public String describe() {
        if (isHttp()) {
            int query = url.indexOf('?');
            return query < 0 ? url : url.substring(0, query);
        }
        return command + (args.isEmpty() ? "" : " (" + args.size() + (args.size() == 1 ? " argument)" : " arguments)"));
    }

    @Override
    public String toString() {
        return "ServerDefinition[" + name + " " + (isHttp() ? "http " : "stdio ") + describe() + ", env keys "
                + env.keySet() + ", header names " + headers.keySet() + ", from " + source + "]";
    }
}
