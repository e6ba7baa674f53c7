package dev.rlmmcp.transport.http;

import dev.rlmmcp.transport.HeapReturn;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;

/** Every HTTP request, with its declared body size, counted by {@link HeapReturn} while it is served. */
final class HeapReturnFilter extends HttpFilter {

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        try (HeapReturn.Scope scope = HeapReturn.handling(request.getContentLengthLong())) {
            chain.doFilter(request, response);
        }
    }
}
