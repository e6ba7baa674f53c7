package dev.rlmmcp.transport.http;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayInputStream;
import java.io.IOException;

/** A request whose body was read (to find where it goes), handed on with that body to read again. */
final class BufferedRequest extends HttpServletRequestWrapper {

    private final byte[] body;

    private BufferedRequest(HttpServletRequest request, byte[] body) {
        super(request);
        this.body = body;
    }

    /** The request with its body read, or null after answering 413 when it is larger than {@code max} bytes. */
    static BufferedRequest read(HttpServletRequest request, HttpServletResponse response, int max) throws IOException {
        byte[] body = JsonResponse.readBody(request, response, max);
        return body == null ? null : new BufferedRequest(request, body);
    }

    byte[] body() {
        return body;
    }

    @Override
    public ServletInputStream getInputStream() {
        ByteArrayInputStream in = new ByteArrayInputStream(body);
        return new ServletInputStream() {
            @Override
            public int read() {
                return in.read();
            }

            @Override
            public int read(byte[] b, int off, int len) {
                return in.read(b, off, len);
            }

            @Override
            public boolean isFinished() {
                return in.available() == 0;
            }

            @Override
            public boolean isReady() {
                return true;
            }

            @Override
            public void setReadListener(ReadListener listener) {
                throw new IllegalStateException("a buffered body is read blocking");
            }
        };
    }
}
