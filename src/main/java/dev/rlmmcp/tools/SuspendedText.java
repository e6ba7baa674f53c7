package dev.rlmmcp.tools;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Locale;

/**
 * The text of a step suspended for the agent's answers: what it waits for, one line each, how to answer
 * in one line, then what the step printed so far. A large batch gets shorter previews, so that the reply
 * stays small however many calls the code made at once.
 */
final class SuspendedText {

    /** Past this many pending calls, previews are cut to {@link #SHORT_PREVIEW} characters. */
    private static final int MANY = 16;

    private static final int SHORT_PREVIEW = 60;

    private SuspendedText() {}

    static String render(ObjectNode reply) {
        String session = reply.path("session_id").asText();
        JsonNode pending = reply.path("pending");
        boolean rlm = false;
        StringBuilder text = new StringBuilder();
        if (reply.has("answered")) {
            text.append("Recorded ")
                    .append(reply.path("answered").asInt())
                    .append(" answer(s); the step of session ")
                    .append(session)
                    .append(" still waits for ")
                    .append(pending.size())
                    .append(":\n");
            pending.forEach(call -> line(text, call, pending.size()));
            return text.append("The call that gives the last answer gets the rest of the step.")
                    .toString();
        }
        text.append("SUSPENDED: the step waits for ")
                .append(pending.size())
                .append(pending.size() == 1 ? " sub-call" : " sub-calls")
                .append(" that you answer (you are the model here):\n");
        for (JsonNode call : pending) {
            rlm |= call.hasNonNull("child_session_id");
            line(text, call, pending.size());
        }
        text.append("Answer with rlm_answer(session_id=\"")
                .append(session)
                .append("\", answers=[{\"id\": \"")
                .append(pending.path(0).path("id").asText("q1"))
                .append("\", \"text\": \"...\"}, ...]), any subset at a time (sub-agents may answer in parallel); ")
                .append("the step goes on when all are answered. Whole prompt: rlm_pending(session_id=\"")
                .append(session)
                .append("\", id=...).");
        if (rlm) {
            text.append(" An rlm call's `context` is loaded in its child session: work there with rlm_execute, ")
                    .append("then answer {\"id\", \"var\": \"<variable>\"}.");
        }
        text.append(" Refuse one: {\"id\", \"error\": \"why\"}; give all up: rlm_answer(session_id, cancel=true).");
        String printed = reply.path("stdout").asText("");
        if (!printed.isEmpty()) {
            text.append("\noutput so far:\n").append(printed);
        }
        return text.toString();
    }

    /** One pending call: id, kind, size, its child session, and a preview (shorter in a large batch). */
    private static void line(StringBuilder text, JsonNode call, int pending) {
        String preview = call.path("preview").asText();
        if (pending > MANY) {
            preview = TextRenderer.clip(preview, SHORT_PREVIEW);
        }
        text.append("- ")
                .append(call.path("id").asText())
                .append(' ')
                .append(call.path("kind").asText())
                .append(String.format(
                        Locale.ROOT, " %,d chars", call.path("chars").asLong()));
        if (call.hasNonNull("child_session_id")) {
            text.append(", child session ").append(call.path("child_session_id").asText());
        }
        text.append(": ").append(preview).append('\n');
    }

    /** rlm_pending: one request's prompt, then where the page sits in it; or why nothing is pending. */
    static String prompt(ObjectNode reply) {
        if (!reply.has("prompt")) {
            return reply.path("message").asText("nothing is pending");
        }
        long from = reply.path("offset").asLong();
        String text = reply.path("prompt").asText();
        StringBuilder footer = new StringBuilder("[")
                .append(reply.path("id").asText())
                .append(' ')
                .append(reply.path("kind").asText())
                .append(String.format(
                        Locale.ROOT,
                        "; chars %,d–%,d of %,d",
                        from,
                        from + text.length(),
                        reply.path("total_chars").asLong()));
        if (reply.hasNonNull("next_offset")) {
            footer.append("; more: offset=").append(reply.path("next_offset").asLong());
        }
        if (reply.hasNonNull("child_session_id")) {
            footer.append("; its context is in session ")
                    .append(reply.path("child_session_id").asText());
        }
        return text + (text.endsWith("\n") ? "" : "\n") + footer.append(']');
    }
}
