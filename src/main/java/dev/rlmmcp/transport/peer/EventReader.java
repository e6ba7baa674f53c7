package dev.rlmmcp.transport.peer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/** Reads an MCP event stream (SSE) up to the response it ends with, handing each message before it on. */
final class EventReader {

    private EventReader() {}

    /** The stream's JSON-RPC response; every other message goes to {@code before} as it arrives. */
    static JsonNode finalResponse(InputStream stream, ObjectMapper json, Consumer<JsonNode> before) throws IOException {
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
            StringBuilder data = new StringBuilder();
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.startsWith("data:")) {
                    data.append(line.substring(line.startsWith("data: ") ? 6 : 5))
                            .append('\n');
                } else if (line.isEmpty() && !data.isEmpty()) {
                    JsonNode message = json.readTree(data.toString());
                    data.setLength(0);
                    if (message.has("id") && (message.has("result") || message.has("error"))) {
                        return message;
                    }
                    before.accept(message);
                }
            }
        }
        throw new IOException("the owner's event stream ended without an answer");
    }
}
