package dev.rlmmcp.transport.http;

import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.util.List;
import org.eclipse.jetty.ee11.servlet.ErrorHandler;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * The body of an error the container answers itself (a servlet that threw, a request Jetty refused):
 * the JSON-RPC error shape of every endpoint, with the HTTP reason as its message. Jetty's own page
 * would carry the exception's class and message.
 */
final class JsonErrorHandler extends ErrorHandler {

    @Override
    protected boolean generateAcceptableResponse(
            Request request,
            Response response,
            Callback callback,
            String contentType,
            List<Charset> charsets,
            int code,
            String message,
            Throwable cause) {
        int jsonRpcCode = code >= 500 ? -32603 : -32600;
        String reason = code >= 500 ? "internal error; the server log has the details" : HttpStatus.getMessage(code);
        byte[] body = JsonResponse.errorBody(jsonRpcCode, reason);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
        response.write(true, ByteBuffer.wrap(body), callback);
        return true;
    }
}
