package dev.rlmmcp.e2e;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * A web server's access log in the combined format, as big as asked, the same every time, with the facts a
 * test checks an agent's answers against: how many lines, and how many of each status.
 */
record AccessLogFile(Path path, long bytes, int lines, Map<String, Integer> byStatus) {

    private static final String[] PATHS = {"/", "/index.html", "/api/v1/users", "/api/v1/orders?page=2",
        "/api/v1/search?q=rlm", "/static/app.js", "/static/style.css", "/login", "/logout", "/favicon.ico"};
    private static final String[] AGENTS = {"Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 Safari/605.1.15", "curl/8.5.0",
        "python-requests/2.32.3"};
    private static final int[] STATUS_WEIGHTS = {200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 200,
        200, 304, 304, 301, 404, 404, 403, 500};

    /** Writes at least {@code minBytes} of log to {@code path}, creating its directories. */
    static AccessLogFile write(Path path, long minBytes) throws IOException {
        Files.createDirectories(path.getParent());
        Random random = new Random(29);
        Map<String, Integer> byStatus = new TreeMap<>();
        long bytes = 0;
        int lines = 0;
        try (BufferedWriter out = Files.newBufferedWriter(path, StandardCharsets.UTF_8)) {
            while (bytes < minBytes) {
                int second = lines / 2;
                int status = STATUS_WEIGHTS[random.nextInt(STATUS_WEIGHTS.length)];
                String line = String.format("10.%d.%d.%d - - [27/Nov/2026:%02d:%02d:%02d +0000] \"%s %s HTTP/1.1\" %d %d"
                        + " \"%s\" \"%s\"\n", random.nextInt(256), random.nextInt(256), random.nextInt(256),
                        second / 3600 % 24, second / 60 % 60, second % 60, random.nextInt(5) == 0 ? "POST" : "GET",
                        PATHS[random.nextInt(PATHS.length)], status, 200 + random.nextInt(50_000),
                        random.nextInt(3) == 0 ? "-" : "https://shop.example.com/", AGENTS[random.nextInt(AGENTS.length)]);
                out.write(line);
                bytes += line.length();
                lines++;
                byStatus.merge(Integer.toString(status), 1, Integer::sum);
            }
        }
        return new AccessLogFile(path, bytes, lines, Map.copyOf(byStatus));
    }

    /** What Python prints for {@code len(log), sorted(by_status.items())} on this log. */
    String countLine() {
        StringBuilder out = new StringBuilder().append(lines).append(" [");
        new TreeMap<>(byStatus).forEach((status, n) -> out.append(out.charAt(out.length() - 1) == '[' ? "" : ", ")
                .append("('").append(status).append("', ").append(n).append(')'));
        return out.append(']').toString();
    }
}
