package dev.rlmmcp.e2e.support;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.function.Consumer;

/** A raw client of {@code rlm-mcp stdio}: one message a line on the server's stdin, one a line back. */
final class RawStdioClient extends RawClient {

    private final Process process;
    private final OutputStream stdin;

    private RawStdioClient(List<String> command) throws IOException {
        process = new ProcessBuilder(command).start();
        stdin = process.getOutputStream();
        readLines(process.getInputStream(), line -> {
            if (!line.isBlank()) {
                receive(line);
            }
        });
        readLines(process.getErrorStream(), this::note);
    }

    static RawStdioClient start(List<String> command) throws IOException {
        RawStdioClient client = new RawStdioClient(command);
        try {
            client.initialize();
        } catch (IOException | RuntimeException | AssertionError e) {
            client.close();
            throw e;
        }
        return client;
    }

    private static void readLines(InputStream in, Consumer<String> into) {
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    into.accept(line);
                }
            } catch (IOException ignored) {
                // the server is gone
            }
        });
    }

    @Override
    public synchronized void send(String message) throws IOException {
        stdin.write((message + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    @Override
    public void close() {
        List<ProcessHandle> children = process.descendants().toList();
        process.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
    }

    @Override
    public String toString() {
        return "stdio";
    }
}
