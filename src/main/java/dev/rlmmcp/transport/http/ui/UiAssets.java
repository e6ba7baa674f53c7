package dev.rlmmcp.transport.http.ui;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The page's files, read from the jar once: no build step, no CDN. */
final class UiAssets {

    record Asset(byte[] bytes, String contentType) {}

    private static final List<String> FILES =
            List.of("index.html", "login.html", "app.css", "app.js", "python.js", "charts.js", "favicon.svg");

    private final Map<String, Asset> byName = new HashMap<>();

    UiAssets() {
        for (String name : FILES) {
            try (InputStream in = UiAssets.class.getResourceAsStream(name)) {
                if (in == null) {
                    throw new IllegalStateException("missing UI asset " + name);
                }
                byName.put(name, new Asset(in.readAllBytes(), contentType(name)));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    Asset get(String name) {
        return byName.get(name);
    }

    private static String contentType(String name) {
        String ext = name.substring(name.lastIndexOf('.') + 1);
        return switch (ext) {
            case "html" -> "text/html; charset=utf-8";
            case "css" -> "text/css; charset=utf-8";
            case "js" -> "text/javascript; charset=utf-8";
            case "svg" -> "image/svg+xml";
            default -> "application/octet-stream";
        };
    }
}
