package dev.rlmmcp.transport.stateless;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** Checks a client's answer to an input request against what that request asks for, before a handler sees it. */
final class InputResponses {

    private static final Set<String> ACTIONS = Set.of("accept", "decline", "cancel");

    private InputResponses() {}

    /** Throws {@link ResumableCall.InvalidInput} naming the key and the fix if {@code value} does not answer {@code asked}. */
    static void check(ResumableCall.Asked asked, Object value) {
        String problem = problem(asked.method(), value);
        if (problem != null) {
            throw new ResumableCall.InvalidInput("params.inputResponses." + asked.key() + " does not answer the "
                    + asked.method() + " request: " + problem);
        }
    }

    static String problem(String method, Object value) {
        if (!(value instanceof Map<?, ?> result)) {
            return "it must be an object (the request's result), not "
                    + (value == null ? "null" : value.getClass().getSimpleName().toLowerCase(Locale.ROOT));
        }
        return switch (method) {
            case McpSchema.METHOD_ELICITATION_CREATE ->
                !(result.get("action") instanceof String action) || !ACTIONS.contains(action)
                        ? "its action must be accept, decline or cancel"
                        : result.containsKey("content") && !(result.get("content") instanceof Map)
                                ? "its content must be an object of the requested fields"
                                : null;
            case McpSchema.METHOD_SAMPLING_CREATE_MESSAGE ->
                !(result.get("role") instanceof String)
                                || !(result.get("content") instanceof Map<?, ?>
                                        || result.get("content") instanceof List<?>)
                        ? "it must hold the message's role and content"
                        : null;
            case McpSchema.METHOD_ROOTS_LIST ->
                result.get("roots") instanceof List<?> roots
                                && roots.stream()
                                        .allMatch(root -> root instanceof Map<?, ?> r && r.get("uri") instanceof String)
                        ? null
                        : "it must hold roots, a list of objects each with its uri";
            default -> null;
        };
    }
}
