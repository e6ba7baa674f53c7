package dev.rlmmcp.e2e.support;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * A web server's access log in the combined format (as nginx and Apache write it), generated from a fixed
 * seed, with the counts a correct analysis finds in it.
 *
 * @param lines   lines in the file
 * @param status  lines per HTTP status code
 * @param methods lines per request method
 */
public record WebLog(long lines, Map<String, Long> status, Map<String, Long> methods) {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("dd/MMM/yyyy:HH:mm:ss Z", Locale.ROOT);
    private static final List<String> PATHS = List.of(
            "/",
            "/index.html",
            "/products",
            "/products/%d",
            "/api/v1/orders/%d",
            "/api/v1/cart",
            "/api/v1/search?q=lamp&page=%d",
            "/static/app.%d.js",
            "/static/style.css",
            "/images/p/%d.jpg",
            "/login",
            "/checkout",
            "/favicon.ico",
            "/robots.txt");
    private static final List<String> AGENTS = List.of(
            "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
            "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15",
            "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:127.0) Gecko/20100101 Firefox/127.0",
            "curl/8.8.0",
            "Googlebot/2.1 (+http://www.google.com/bot.html)",
            "python-requests/2.32.3");
    private static final List<String> REFERERS =
            List.of("-", "https://shop.example.com/", "https://www.google.com/", "https://shop.example.com/products");

    /** Writes at least {@code bytes} bytes of log to {@code file}. */
    public static WebLog write(Path file, long bytes) throws IOException {
        Random random = new Random(29);
        Map<String, Long> status = new TreeMap<>();
        Map<String, Long> methods = new TreeMap<>();
        ZonedDateTime time = ZonedDateTime.of(2026, 11, 26, 0, 0, 0, 0, ZoneOffset.UTC);
        long lines = 0;
        long written = 0;
        Files.createDirectories(file.getParent());
        try (BufferedWriter out = Files.newBufferedWriter(file, StandardCharsets.US_ASCII)) {
            while (written < bytes) {
                String method = pick(random, 1000, new String[] {"GET", "POST", "PUT", "DELETE", "HEAD"}, new int[] {
                    820, 130, 25, 15, 10
                });
                String code =
                        pick(random, 1000, new String[] {"200", "304", "301", "404", "500", "502", "503"}, new int[] {
                            840, 55, 10, 62, 18, 9, 6
                        });
                String path = PATHS.get(random.nextInt(PATHS.size()))
                        .replace("%d", Integer.toString(1 + random.nextInt(9999)));
                time = time.plusNanos(random.nextInt(400_000_000));
                String line = "%d.%d.%d.%d - - [%s] \"%s %s HTTP/1.1\" %s %d \"%s\" \"%s\"\n"
                        .formatted(
                                10 + random.nextInt(200),
                                random.nextInt(256),
                                random.nextInt(256),
                                1 + random.nextInt(254),
                                TIME.format(time),
                                method,
                                path,
                                code,
                                code.equals("304") ? 0 : 200 + random.nextInt(90_000),
                                REFERERS.get(random.nextInt(REFERERS.size())),
                                AGENTS.get(random.nextInt(AGENTS.size())));
                out.write(line);
                written += line.length();
                lines++;
                status.merge(code, 1L, Long::sum);
                methods.merge(method, 1L, Long::sum);
            }
        }
        return new WebLog(lines, status, methods);
    }

    /** What Python prints for {@code len(log), sorted(by_status.items())} on this log. */
    public String countLine() {
        StringBuilder out = new StringBuilder().append(lines).append(" [");
        status.forEach((code, n) -> out.append(out.charAt(out.length() - 1) == '[' ? "" : ", ")
                .append("('")
                .append(code)
                .append("', ")
                .append(n)
                .append(')'));
        return out.append(']').toString();
    }

    public long serverErrors() {
        return status.entrySet().stream()
                .filter(e -> e.getKey().startsWith("5"))
                .mapToLong(Map.Entry::getValue)
                .sum();
    }

    private static String pick(Random random, int total, String[] values, int[] weights) {
        int r = random.nextInt(total);
        for (int i = 0; i < values.length; i++) {
            r -= weights[i];
            if (r < 0) {
                return values[i];
            }
        }
        return values[values.length - 1];
    }
}
