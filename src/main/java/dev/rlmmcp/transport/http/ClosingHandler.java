package dev.rlmmcp.transport.http;

import dev.rlmmcp.transport.peer.PeerProxy;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The outermost handler: once the server is closing (after a cluster node left the cluster, while Jetty's
 * graceful stop lets the requests under way finish), every new request on either port is refused with the
 * product's own JSON 503, {@code Retry-After}, {@link PeerProxy#NOT_SERVING} (a forwarding node waits for the
 * session to move) and {@link PeerProxy#OUTCOME} {@code not-run}, until the process exits: never Jetty's bare
 * 503, which says neither when to come back nor that the call ran nowhere.
 */
final class ClosingHandler extends Handler.Wrapper {

    private static final byte[] BODY = JsonResponse.errorBody(
            -32000,
            "this node is shutting down and ran nothing of this request; retry (another node serves it) in a "
                    + "few seconds");

    private volatile boolean closing;

    ClosingHandler(Handler handler) {
        super(handler);
    }

    /** From now on, every new request is refused. */
    void closing() {
        closing = true;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) throws Exception {
        if (!closing) {
            return super.handle(request, response, callback);
        }
        response.setStatus(503);
        response.getHeaders().put("Retry-After", "2");
        response.getHeaders().put(PeerProxy.NOT_SERVING, "true");
        response.getHeaders().put(PeerProxy.OUTCOME, PeerProxy.NOT_RUN);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONNECTION, "close"); // the body, if any, is left unread
        response.write(true, ByteBuffer.wrap(BODY), callback);
        return true;
    }
}
