package dev.rlmmcp.core;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.channel.KernelReply;

/** A kernel's reply as the agent sees it: status and session first, or the kernel's refusal as an error. */
final class KernelReplies {

    private KernelReplies() {
    }

    /** The reply's body, led by {@code status} (unless null) and the session's id; a refusal is thrown. */
    static ObjectNode shown(ObjectMapper json, String sessionId, KernelReply reply, String status) {
        ObjectNode body = reply.body();
        if (!reply.ok()) {
            ErrorCode code = ErrorCode.of(body.path("code").asText());
            String argument = body.path("argument").isTextual() ? body.path("argument").asText() : null;
            throw new RlmException(code, body.path("message").asText("the kernel refused the request"), argument,
                    fixFor(code));
        }
        body.remove("ok");
        body.remove("id");
        ObjectNode shown = json.createObjectNode();
        if (status != null) {
            shown.put("status", status);
        }
        shown.put("session_id", sessionId);
        return shown.setAll(body);
    }

    private static String fixFor(ErrorCode code) {
        return switch (code) {
            case VARIABLE_NOT_FOUND -> "call rlm_list_vars to see the variables of this session";
            case INVALID_DATA -> "check that data_type matches the data, or load it as text";
            case OUT_OF_MEMORY -> "free memory with rlm_clear, or load a smaller part of the data";
            case INTERRUPTED -> "the load was cancelled or ran past --max-timeout-s; load a smaller part";
            default -> null;
        };
    }
}
