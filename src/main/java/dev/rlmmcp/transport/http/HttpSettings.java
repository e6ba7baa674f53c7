package dev.rlmmcp.transport.http;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;

/**
 * How the HTTP transports listen and whom it lets in.
 *
 * @param apiKey         required as a bearer token when not null
 * @param allowedHosts   extra names the Host header may carry besides the loopback names
 * @param corsOrigins    browser origins allowed to call (exact {@code scheme://host[:port]})
 * @param sessionIdle    how long an MCP session may go unused before it is ended
 * @param sseKeepAlive   how often an idle legacy SSE stream gets a keep-alive comment
 * @param portFile       where to write the bound port, or null
 */
public record HttpSettings(
        String host,
        int port,
        int maxRequestBytes,
        ApiKey apiKey,
        Set<String> allowedHosts,
        Set<String> corsOrigins,
        Duration sessionIdle,
        Duration sseKeepAlive,
        Path portFile,
        Duration stopTimeout) {

    public HttpSettings {
        allowedHosts = Set.copyOf(allowedHosts);
        corsOrigins = Set.copyOf(corsOrigins);
    }

    /** Loopback only, no key, no CORS: what tests and a local user get by default. */
    public static HttpSettings local(int port, int maxRequestBytes) {
        return new HttpSettings(
                "127.0.0.1",
                port,
                maxRequestBytes,
                null,
                Set.of(),
                Set.of(),
                Duration.ofMinutes(30),
                Duration.ofSeconds(15),
                null,
                Duration.ofSeconds(10));
    }
}
