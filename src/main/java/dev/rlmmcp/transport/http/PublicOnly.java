package dev.rlmmcp.transport.http;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.FilterConfig;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;

/** A check for clients' requests only: a peer's request (see {@link PeerGate}) passes it untouched. */
final class PublicOnly implements Filter {

    private final Filter check;

    PublicOnly(Filter check) {
        this.check = check;
    }

    @Override
    public void init(FilterConfig config) throws ServletException {
        check.init(config);
    }

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain)
            throws IOException, ServletException {
        if (PeerGate.peerOf(request) != null) {
            chain.doFilter(request, response);
        } else {
            check.doFilter(request, response, chain);
        }
    }

    @Override
    public void destroy() {
        check.destroy();
    }
}
