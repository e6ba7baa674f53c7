package dev.rlmmcp.llm;

/** One message of a conversation sent to a model: role "user" or "assistant", and its text. */
public record LlmMessage(String role, String content) {

    public static LlmMessage user(String content) {
        return new LlmMessage("user", content);
    }

    public static LlmMessage assistant(String content) {
        return new LlmMessage("assistant", content);
    }
}
