package dev.rlmmcp.e2e.support;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * A browser check in {@code e2e/} (a node script that drives Chromium against the server's pages), run
 * from the project root with its stderr shown. It writes one JSON event a line; the last one says how
 * the check ended.
 */
public final class BrowserCheck {

    /** How a check ended: its exit code, its last event (null if none) and all it wrote to stdout. */
    public record Outcome(int exit, JsonNode last, String output) {}

    private BrowserCheck() {}

    /** Runs {@code e2e/script} with these arguments and nothing on its stdin. */
    public static Outcome run(String script, List<String> args) throws IOException, InterruptedException {
        return run(script, args, null);
    }

    /**
     * Runs {@code e2e/script} with these arguments; an event for which {@code answer} returns a line is
     * answered with it on the script's stdin and is not counted as the last event.
     */
    public static Outcome run(String script, List<String> args, Function<JsonNode, String> answer)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(
                McpDriver.findNode().toString(),
                McpDriver.projectRoot().resolve("e2e").resolve(script).toString()));
        command.addAll(args);
        Process browser = new ProcessBuilder(command)
                .directory(McpDriver.projectRoot().toFile())
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        if (answer == null) {
            browser.getOutputStream().close();
        }
        JsonNode last = null;
        StringBuilder output = new StringBuilder();
        try (BufferedReader out =
                        new BufferedReader(new InputStreamReader(browser.getInputStream(), StandardCharsets.UTF_8));
                Writer in = new OutputStreamWriter(browser.getOutputStream(), StandardCharsets.UTF_8)) {
            String line;
            while ((line = out.readLine()) != null) {
                output.append(line).append('\n');
                JsonNode event = event(line);
                String reply = answer == null || event == null ? null : answer.apply(event);
                if (reply != null) {
                    in.write(reply + "\n");
                    in.flush();
                } else if (event != null) {
                    last = event;
                }
            }
        } finally {
            if (!browser.waitFor(60, TimeUnit.SECONDS)) {
                browser.descendants().forEach(ProcessHandle::destroyForcibly);
                browser.destroyForcibly();
                browser.waitFor(10, TimeUnit.SECONDS);
            }
        }
        return new Outcome(browser.exitValue(), last, output.toString().strip());
    }

    /** The line as an event, or null if it is none (node's own warnings may reach stdout). */
    private static JsonNode event(String line) {
        try {
            return line.isBlank() ? null : McpDriver.MAPPER.readTree(line);
        } catch (JsonProcessingException e) {
            return null;
        }
    }
}
