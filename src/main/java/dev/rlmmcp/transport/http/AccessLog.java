package dev.rlmmcp.transport.http;

import java.io.PrintStream;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.RequestLog;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.NanoTime;

/**
 * One JSON line per HTTP request: method, path, status, response bytes and milliseconds. The path
 * is logged without its query (which may carry {@code ?token=}); no header or body is logged.
 */
final class AccessLog implements RequestLog {

    private final PrintStream out;

    AccessLog(PrintStream out) {
        this.out = out;
    }

    @Override
    public void log(Request request, Response response) {
        long ms = TimeUnit.NANOSECONDS.toMillis(NanoTime.since(request.getBeginNanoTime()));
        out.println("{\"event\":\"http_request\",\"method\":\"" + safe(request.getMethod()) + "\",\"path\":\""
                + safe(request.getHttpURI().getPath()) + "\",\"status\":" + response.getStatus() + ",\"bytes\":"
                + Response.getContentBytesWritten(response) + ",\"ms\":" + ms + "}");
    }

    /** Only printable ASCII without quotes or backslashes, so a line is always valid JSON. */
    static String safe(String s) {
        if (s == null) {
            return "";
        }
        StringBuilder b = new StringBuilder(Math.min(s.length(), 512));
        for (int i = 0; i < s.length() && i < 512; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x20 && c < 0x7f && c != '"' && c != '\\' ? c : '?');
        }
        return b.toString();
    }
}
