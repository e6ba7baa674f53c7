package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The stdio wire itself, as a client that writes raw lines and closes its end early would see it. */
class StdioProtocolIT {

    private static final String INIT = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}""";
    private static final String INITIALIZED = """
            {"jsonrpc":"2.0","method":"notifications/initialized"}""";

    private static List<JsonNode> exchange(String... lines) throws IOException, InterruptedException {
        Process server = new ProcessBuilder(ServerProcess.command(List.of("stdio", "--blocked-imports", "none")))
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try (OutputStream in = server.getOutputStream()) {
            in.write((String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
        }
        String out = new String(server.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(server.waitFor(30, TimeUnit.SECONDS))
                .as("server exits after stdin closes")
                .isTrue();
        List<JsonNode> replies = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                replies.add(McpDriver.MAPPER.readTree(line));
            }
        }
        return replies;
    }

    @Test
    void answersEveryRequestEvenWhenTheClientClosesStdinRightAfterSending() throws Exception {
        Map<String, JsonNode> byId = exchange(INIT, INITIALIZED, """
                {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"import time; time.sleep(0.5); 6 * 7"}}}""").stream()
                .collect(Collectors.toMap(r -> r.path("id").asText(), Function.identity()));
        assertThat(byId).containsKeys("1", "2");
        String text = byId.get("2")
                .path("result")
                .path("content")
                .path(0)
                .path("text")
                .asText();
        assertThat(text).startsWith("42\n");
    }

    @Test
    void protocolErrorsUseJsonRpcCodesAndTheSessionGoesOn() throws Exception {
        List<JsonNode> replies = exchange(INIT, INITIALIZED, "this is not json", """
                {"jsonrpc":"2.0","id":7,"method":"no/such/method"}""", """
                {"jsonrpc":"2.0","id":8,"method":"ping"}""");
        assertThat(replies).anySatisfy(r -> {
            assertThat(r.path("id").isNull()).isTrue();
            assertThat(r.path("error").path("code").asInt()).isEqualTo(-32700);
        });
        assertThat(replies).anySatisfy(r -> {
            assertThat(r.path("id").asInt()).isEqualTo(7);
            assertThat(r.path("error").path("code").asInt()).isEqualTo(-32601);
        });
        assertThat(replies).anySatisfy(r -> assertThat(r.path("id").asInt()).isEqualTo(8));
    }

    /**
     * A Python the kernels cannot run: the client still gets initialize and its tools at once (a client that
     * does not wait for a starting server must not lose them), then every call that needs a kernel is refused
     * with why and how to fix it; stderr has the same one line, and the server exits 2 when stdin closes.
     */
    @Test
    void aServerWhosePythonFailsItsCheckListsItsToolsRefusesEveryCallWithTheFixAndExitsWithCode2(@TempDir Path dir)
            throws Exception {
        Path python = dir.resolve("python3");
        Files.writeString(python, "#!/bin/sh\nsleep 1\necho 'this is no Python' >&2\nexit 1\n");
        Files.setPosixFilePermissions(python, PosixFilePermissions.fromString("rwxr-xr-x"));
        Process server =
                new ProcessBuilder(ServerProcess.command(List.of("stdio", "--python", python.toString()))).start();
        StringBuffer stderr = new StringBuffer();
        Thread errors = Thread.ofPlatform()
                .start(() -> stderr.append(new String(readAll(server.getErrorStream()), StandardCharsets.UTF_8)));
        OutputStream in = server.getOutputStream();
        in.write((INIT + "\n" + INITIALIZED + "\n" + """
                {"jsonrpc":"2.0","id":2,"method":"tools/list"}
                {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"1"}}}
                this is not json
                """).getBytes(StandardCharsets.UTF_8));
        in.flush();
        java.io.BufferedReader out = new java.io.BufferedReader(
                new java.io.InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
        Map<String, JsonNode> byId = new java.util.HashMap<>();
        while (byId.size() < 4) {
            String line = out.readLine();
            assertThat(line)
                    .as("an answer for each of the 4 requests (one of them malformed)")
                    .isNotNull();
            JsonNode reply = McpDriver.MAPPER.readTree(line);
            byId.put(reply.path("id").asText(), reply);
        }
        assertThat(byId.get("1").path("result").path("serverInfo").path("name").asText())
                .isEqualTo("rlm-mcp");
        assertThat(byId.get("2").path("result").path("tools")).hasSize(18);
        assertThat(byId.get("null").path("error").path("code").asInt()).isEqualTo(-32700);
        JsonNode refused = byId.get("3").path("error");
        assertThat(refused.path("message").asText())
                .contains("cannot start kernels", python.toString(), "--python / RLM_PYTHON");
        in.close();
        assertThat(server.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(server.exitValue()).isEqualTo(2);
        errors.join();
        assertThat(stderr.toString()
                        .lines()
                        .filter(l -> l.startsWith("rlm-mcp: "))
                        .toList())
                .as(stderr.toString())
                .singleElement()
                .asString()
                .contains(python.toString(), "--python / RLM_PYTHON");
    }

    private static byte[] readAll(java.io.InputStream in) {
        try {
            return in.readAllBytes();
        } catch (IOException e) {
            return new byte[0];
        }
    }

    @Test
    void nothingButProtocolReachesStdout() throws Exception {
        List<JsonNode> replies = exchange(INIT, INITIALIZED, """
                {"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"import os, sys\\nprint('noise')\\nos.write(1, b'raw noise\\\\n')\\nos.system('echo child noise')\\nsys.__stdout__.write('more')"}}}""");
        assertThat(replies)
                .allSatisfy(r -> assertThat(r.path("jsonrpc").asText()).isEqualTo("2.0"));
        assertThat(replies).hasSize(2);
    }
}
