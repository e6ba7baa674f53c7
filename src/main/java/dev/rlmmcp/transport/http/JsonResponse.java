package dev.rlmmcp.transport.http;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.transport.jsonrpc.JsonRpc;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * The one way every HTTP endpoint answers with a JSON body, and the one error shape they share: a JSON-RPC
 * error with a null id under an HTTP status. Bodies come as bytes, serialised by the caller's own mapper
 * (the MCP SDK's records need its mapper, /rpc and /health write Jackson trees).
 */
final class JsonResponse {

    private static final ObjectMapper JSON = new ObjectMapper();

    private JsonResponse() {}

    /** Answers with {@code json} as the body, under {@code status}. */
    static void write(HttpServletResponse response, int status, byte[] json) throws IOException {
        response.setStatus(status);
        response.setContentType("application/json");
        response.setContentLength(json.length);
        response.getOutputStream().write(json);
    }

    /** A JSON-RPC error body (id null) with an HTTP status. */
    static void error(HttpServletResponse response, int status, int code, String message) throws IOException {
        write(response, status, errorBody(code, message));
    }

    /** The bytes of a JSON-RPC error with a null id, for an answer written where there is no servlet response. */
    static byte[] errorBody(int code, String message) {
        try {
            return JSON.writeValueAsBytes(JsonRpc.error(null, code, message));
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * A refusal before the body was read: the connection is closed after the answer (Jetty would
     * otherwise close it anyway to skip the unread body, under a client about to reuse it).
     */
    static void refuseUnread(
            HttpServletRequest request, HttpServletResponse response, int status, int code, String message)
            throws IOException {
        if (request.getContentLengthLong() != 0) {
            response.setHeader("Connection", "close");
        }
        error(response, status, code, message);
    }

    /** The body, or null after answering 413 when it is larger than {@code max} bytes. */
    static byte[] readBody(HttpServletRequest request, HttpServletResponse response, int max) throws IOException {
        if (request.getContentLengthLong() > max) {
            tooLarge(response, max);
            return null;
        }
        try (InputStream in = request.getInputStream()) {
            byte[] body = in.readNBytes(max + 1);
            if (body.length > max) {
                tooLarge(response, max);
                return null;
            }
            return body;
        }
    }

    private static void tooLarge(HttpServletResponse response, int max) throws IOException {
        response.setHeader("Connection", "close");
        error(
                response,
                413,
                -32600,
                "request body larger than " + max
                        + " bytes; raise --max-request-mb / RLM_MAX_REQUEST_MB, or load large data from a file");
    }
}
