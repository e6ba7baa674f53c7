package dev.rlmmcp.e2e;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.sun.net.httpserver.HttpServer;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import dev.rlmmcp.testsupport.S3ProxyServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The S3 and URL tools end to end: the real server jar with a real S3 server (S3Proxy, SigV4) and a
 * local HTTP server, driven by the official TypeScript MCP client over Streamable HTTP and stdio.
 */
class DataToolsIT {

    private static final int BIG = 20 * 1024 * 1024 + 12345;
    /** Line ends of every kind, empty lines, invalid UTF-8, and characters cut by the 1 MiB chunks a stream comes in. */
    private static final byte[] TRICKY = tricky();

    @TempDir
    static Path tmp;

    private static S3ProxyServer s3;
    private static HttpServer web;
    private static String webBase;
    private static ServerProcess server;
    private static McpDriver http;
    private static McpDriver strict;
    private static ServerProcess wrongKeys;
    private static McpDriver wrongKeysClient;
    private static ServerProcess unconfigured;
    private static McpDriver unconfiguredClient;

    @BeforeAll
    static void start() throws Exception {
        s3 = S3ProxyServer.start(tmp.resolve("s3"));
        s3.bucket("claude-code");
        s3.bucket("other");
        s3.object(
                "claude-code", "logs/app.log", "INFO start\nERROR boom\nINFO done\n".getBytes(StandardCharsets.UTF_8));
        s3.object("claude-code", "data/rows.json", "{\"rows\": [1, 2, 3]}".getBytes(StandardCharsets.UTF_8));
        s3.object("claude-code", "data/lines.txt", "a\nb\nc".getBytes(StandardCharsets.UTF_8));
        s3.object("claude-code", "data/table.csv", "name,n\nx,1\ny,2\n".getBytes(StandardCharsets.UTF_8));
        s3.object("claude-code", "parity/tricky.txt", TRICKY);
        s3.object("claude-code", "big/two-mib.txt", "z".repeat(2 * 1024 * 1024).getBytes(StandardCharsets.UTF_8));
        for (int i = 0; i < 7; i++) {
            s3.object("other", "page/p" + i + ".txt", ("page " + i).getBytes(StandardCharsets.UTF_8));
        }
        s3.object("other", "elsewhere.txt", "x".getBytes(StandardCharsets.UTF_8));
        web = webServer();
        webBase = "http://127.0.0.1:" + web.getAddress().getPort();

        server = ServerProcess.http(s3.env(), "--data-root", tmp.toString(), "--url-allowlist", "127.0.0.1/32");
        http = McpDriver.http(server.mcpUrl());
        List<String> stdio = new ArrayList<>(List.of("env"));
        s3.env().forEach((k, v) -> stdio.add(k + "=" + v));
        stdio.addAll(ServerProcess.command(List.of("stdio", "--data-root", tmp.toString(), "--max-transfer-mb", "1")));
        strict = McpDriver.stdio(stdio);
        wrongKeys = ServerProcess.http(
                Map.of(
                        "MINIO_ENDPOINT",
                        s3.endpoint(),
                        "MINIO_ACCESS_KEY",
                        S3ProxyServer.ACCESS_KEY,
                        "MINIO_SECRET_KEY",
                        "not-the-secret"),
                "--data-root",
                tmp.toString());
        wrongKeysClient = McpDriver.http(wrongKeys.mcpUrl());
        // an endpoint without its keys: the S3 tools are listed to say what is missing (with nothing named
        // they are not listed at all: ClientArgumentsIT)
        unconfigured =
                ServerProcess.http(Map.of("MINIO_ENDPOINT", "http://127.0.0.1:9"), "--data-root", tmp.toString());
        unconfiguredClient = McpDriver.http(unconfigured.mcpUrl());
    }

    @AfterAll
    static void stop() {
        for (AutoCloseable c :
                new AutoCloseable[] {unconfiguredClient, unconfigured, wrongKeysClient, wrongKeys, strict, http, server
                }) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // keep stopping the rest
            }
        }
        if (web != null) {
            web.stop(0);
        }
        if (s3 != null) {
            s3.close();
        }
    }

    private static HttpServer webServer() throws IOException {
        HttpServer w = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        w.createContext("/table.csv", x -> {
            byte[] body = "city,pop\nLisbon,545000\nPorto,232000\n".getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        });
        w.createContext("/tricky.txt", x -> {
            x.sendResponseHeaders(200, 0); // chunked: the kernel is not told the size
            try (OutputStream out = x.getResponseBody()) {
                out.write(TRICKY);
            }
        });
        w.createContext("/big", x -> {
            x.sendResponseHeaders(200, 0);
            byte[] block = new byte[64 * 1024];
            java.util.Arrays.fill(block, (byte) 'b');
            try (OutputStream out = x.getResponseBody()) {
                for (int left = BIG; left > 0; left -= block.length) {
                    out.write(block, 0, Math.min(left, block.length));
                }
            }
        });
        w.createContext("/slow", x -> {
            x.sendResponseHeaders(200, 0);
            try (OutputStream out = x.getResponseBody()) {
                for (int i = 0; i < 6; i++) {
                    out.write(("tick " + i + "\n").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                    Thread.sleep(1000);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        w.createContext("/to-metadata", x -> {
            x.getResponseHeaders().add("Location", "http://169.254.169.254/latest/meta-data/iam/");
            x.sendResponseHeaders(302, -1);
            x.close();
        });
        w.start();
        return w;
    }

    private static JsonNode ok(McpDriver client, String tool, Map<String, ?> args) {
        JsonNode result = client.call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isFalse();
        return json(result);
    }

    private static JsonNode refused(McpDriver client, String tool, Map<String, ?> args, String code) {
        JsonNode result = client.call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isTrue();
        JsonNode error = json(result).path("error");
        assertThat(error.path("code").asText()).as("%s", error).isEqualTo(code);
        assertThat(error.path("fix").asText()).as("%s", error).isNotBlank();
        return error;
    }

    private static String run(McpDriver client, String code) {
        return ok(client, "rlm_execute", Map.of("code", code)).path("stdout").asText();
    }

    @Test
    void theToolsAreListedWithTheSeedsArguments() {
        JsonNode tools = http.request(McpDriver.MAPPER.createObjectNode().put("op", "list_tools"));
        String listed = tools.toString();
        assertThat(listed).contains("rlm_load_s3", "rlm_list_buckets", "rlm_list_s3", "rlm_upload_url", "rlm_load_url");
    }

    @Test
    void bucketsAreListed() {
        JsonNode body = ok(http, "rlm_list_buckets", Map.of());
        Set<String> names = new HashSet<>();
        body.path("buckets").forEach(b -> names.add(b.path("name").asText()));
        assertThat(names).contains("claude-code", "other");
        assertThat(body.path("default_bucket").asText()).isEqualTo("claude-code");
    }

    @Test
    void objectsAreListedUnderAPrefixPageByPage() {
        JsonNode first = ok(http, "rlm_list_s3", Map.of("bucket", "other", "prefix", "page/", "max_keys", 3));
        assertThat(first.path("count").asInt()).isEqualTo(3);
        assertThat(first.path("is_truncated").asBoolean()).isTrue();
        JsonNode entry = first.path("objects").get(0);
        assertThat(entry.path("key").asText()).isEqualTo("page/p0.txt");
        assertThat(entry.path("size_bytes").asLong()).isEqualTo(6);
        assertThat(entry.path("size_human").asText()).isEqualTo("6 B");
        assertThat(entry.path("last_modified").asText()).isNotBlank();
        List<String> keys = new ArrayList<>();
        first.path("objects").forEach(o -> keys.add(o.path("key").asText()));
        String token = first.path("next_continuation_token").asText();
        while (!token.isEmpty()) {
            JsonNode page = ok(
                    http,
                    "rlm_list_s3",
                    Map.of("bucket", "other", "prefix", "page/", "max_keys", 3, "continuation_token", token));
            page.path("objects").forEach(o -> keys.add(o.path("key").asText()));
            token = page.path("is_truncated").asBoolean()
                    ? page.path("next_continuation_token").asText()
                    : "";
        }
        assertThat(keys)
                .containsExactly(
                        "page/p0.txt",
                        "page/p1.txt",
                        "page/p2.txt",
                        "page/p3.txt",
                        "page/p4.txt",
                        "page/p5.txt",
                        "page/p6.txt");
    }

    @Test
    void theDefaultBucketIsListedWhenNoneIsNamed() {
        JsonNode body = ok(strict, "rlm_list_s3", Map.of("prefix", "data/"));
        assertThat(body.path("bucket").asText()).isEqualTo("claude-code");
        assertThat(body.path("count").asInt()).isEqualTo(3);
    }

    @Test
    void eachDataTypeLoadsFromS3() {
        JsonNode text = ok(http, "rlm_load_s3", Map.of("key", "logs/app.log", "name", "log"));
        assertThat(text.path("type").asText()).isEqualTo("str");
        assertThat(text.path("bucket").asText()).isEqualTo("claude-code");
        assertThat(text.path("source").asText()).isEqualTo("s3://claude-code/logs/app.log");
        ok(http, "rlm_load_s3", Map.of("key", "data/rows.json", "name", "rows", "data_type", "json"));
        ok(http, "rlm_load_s3", Map.of("key", "data/lines.txt", "name", "ls", "data_type", "lines"));
        ok(http, "rlm_load_s3", Map.of("key", "data/table.csv", "name", "table", "data_type", "csv"));
        assertThat(run(http, "print(log.count('ERROR'), rows['rows'], ls, table[1]['n'])"))
                .isEqualTo("1 [1, 2, 3] ['a', 'b', 'c'] 2\n");
    }

    @Test
    void aMissingBucketOrKeyIsNotFound() {
        JsonNode bucket =
                refused(http, "rlm_load_s3", Map.of("key", "x", "name", "v", "bucket", "no-such-bucket"), "NOT_FOUND");
        assertThat(bucket.path("argument").asText()).isEqualTo("bucket");
        JsonNode key = refused(http, "rlm_load_s3", Map.of("key", "no/such.key", "name", "v"), "NOT_FOUND");
        assertThat(key.path("argument").asText()).isEqualTo("key");
        refused(http, "rlm_list_s3", Map.of("bucket", "no-such-bucket"), "NOT_FOUND");
        refused(http, "rlm_load_s3", Map.of("key", "x", "name", "v", "bucket", "Bad_Bucket"), "INVALID_ARGUMENT");
    }

    @Test
    void wrongCredentialsArePermissionDenied() {
        JsonNode error = refused(wrongKeysClient, "rlm_list_buckets", Map.of(), "PERMISSION_DENIED");
        assertThat(error.path("fix").asText()).contains("MINIO_SECRET_KEY");
        assertThat(error.toString()).doesNotContain("not-the-secret");
        refused(wrongKeysClient, "rlm_load_s3", Map.of("key", "logs/app.log", "name", "v"), "PERMISSION_DENIED");
    }

    @Test
    void theS3KeysAreNotInTheKernelsEnvironment() {
        assertThat(run(http, "print(b'" + S3ProxyServer.SECRET_KEY + "' in open('/proc/self/environ', 'rb').read())"))
                .isEqualTo("False\n");
    }

    @Test
    void halfConfiguredTheS3ToolsSayWhatToSet() {
        for (String tool : List.of("rlm_list_buckets", "rlm_list_s3")) {
            JsonNode error = refused(unconfiguredClient, tool, Map.of(), "NOT_CONFIGURED");
            assertThat(error.path("message").asText())
                    .contains("MINIO_ENDPOINT", "MINIO_ACCESS_KEY", "MINIO_SECRET_KEY");
        }
        refused(unconfiguredClient, "rlm_load_s3", Map.of("key", "k", "name", "v"), "NOT_CONFIGURED");
        refused(
                unconfiguredClient,
                "rlm_upload_url",
                Map.of("url", "https://example.com/", "key", "k"),
                "NOT_CONFIGURED");
    }

    @Test
    void aUrlIsUploadedInPartsThenLoaded() {
        JsonNode up =
                ok(http, "rlm_upload_url", Map.of("url", webBase + "/big", "key", "up/big.bin", "bucket", "other"));
        assertThat(up.path("size_bytes").asLong()).isEqualTo(BIG);
        assertThat(up.path("parts").asInt()).as("multipart").isEqualTo(3);
        JsonNode listed = ok(http, "rlm_list_s3", Map.of("bucket", "other", "prefix", "up/"));
        assertThat(listed.path("objects").get(0).path("size_bytes").asLong()).isEqualTo(BIG);
        ok(http, "rlm_load_s3", Map.of("key", "up/big.bin", "bucket", "other", "name", "big"));
        assertThat(run(http, "print(len(big), big.count('b'))")).isEqualTo(BIG + " " + BIG + "\n");
        run(http, "del big");

        JsonNode small = ok(http, "rlm_upload_url", Map.of("url", webBase + "/table.csv", "key", "up/table.csv"));
        assertThat(small.path("parts").asInt()).isEqualTo(1);
        assertThat(small.path("bucket").asText()).isEqualTo("claude-code");
    }

    private static byte[] tricky() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes("crlf\r\nlone\rcr\n\n\u000b\u2028 are not line ends\r\n".getBytes(StandardCharsets.UTF_8));
        out.write(0xff);
        while (out.size() < (1 << 20) - 2) {
            out.write('a');
        }
        out.writeBytes("😀\r".getBytes(StandardCharsets.UTF_8)); // the 1 MiB cut falls inside the 😀
        while (out.size() < (2 << 20) - 1) {
            out.write('b');
        }
        out.writeBytes("\r\né\r\r\nno final newline".getBytes(StandardCharsets.UTF_8)); // and between \r and \n
        out.writeBytes(new byte[] {(byte) 0xe2, (byte) 0x82});
        return out.toByteArray();
    }

    @Test
    void fileS3AndUrlLoadsGivePythonsOwnParseOfTheSameBytes() throws IOException {
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x")); // the kernel is uid 65534
        Path file = Files.write(tmp.resolve("tricky.txt"), TRICKY);
        run(http, """
                def _reference(data_type):
                    text = open(%s, 'rb').read().decode('utf-8', 'replace')
                    if data_type == 'text':
                        return text
                    *whole, last = text.split('\\n')
                    return [l[:-1] if l.endswith('\\r') else l for l in whole] + ([last] if last else [])
                """.formatted("'" + file.toRealPath() + "'"));
        for (String type : List.of("text", "lines")) {
            ok(http, "rlm_load_file", Map.of("path", "tricky.txt", "name", "f", "data_type", type));
            ok(http, "rlm_load_s3", Map.of("key", "parity/tricky.txt", "name", "s", "data_type", type));
            ok(http, "rlm_load_url", Map.of("url", webBase + "/tricky.txt", "name", "u", "data_type", type));
            assertThat(run(http, "r = _reference('%s')\nprint(f == r, s == r, u == r, len(r))".formatted(type)))
                    .isEqualTo("True True True " + (type.equals("text") ? "2097169" : "7") + "\n");
        }
        assertThat(run(http, "print(f[:4], f[-1] == 'no final newline\\ufffd')"))
                .isEqualTo("['crlf', 'lone\\rcr', '', '\\x0b\\u2028 are not line ends'] True\n");
    }

    @Test
    void aUrlLoadsStraightIntoAVariable() {
        JsonNode body =
                ok(http, "rlm_load_url", Map.of("url", webBase + "/table.csv", "name", "cities", "data_type", "csv"));
        assertThat(body.path("length").asInt()).isEqualTo(2);
        assertThat(run(http, "print(cities[0]['city'])")).isEqualTo("Lisbon\n");
    }

    @Test
    void aLongTransferSendsProgress() {
        JsonNode line = http.callRaw("rlm_load_url", Map.of("url", webBase + "/slow", "name", "slow"), true);
        assertThat(line.path("ok").asBoolean()).as("%s", line).isTrue();
        List<JsonNode> progress = http.events().stream()
                .filter(e -> e.path("event").asText().equals("progress")
                        && e.path("id").equals(line.path("id")))
                .toList();
        assertThat(progress).isNotEmpty();
        assertThat(progress.getLast().path("message").asText()).contains("loading " + webBase + "/slow");
    }

    @Test
    void privateAddressesAreRefusedByDefault() {
        int port = web.getAddress().getPort();
        for (String url : List.of(
                webBase + "/table.csv",
                "http://localhost:" + port + "/table.csv",
                "http://169.254.169.254/latest/meta-data/",
                "http://10.0.0.1/x",
                "http://[::1]:" + port + "/")) {
            refused(strict, "rlm_load_url", Map.of("url", url, "name", "v"), "URL_REFUSED");
            refused(strict, "rlm_upload_url", Map.of("url", url, "key", "k"), "URL_REFUSED");
        }
        refused(strict, "rlm_load_url", Map.of("url", "file:///etc/passwd", "name", "v"), "URL_REFUSED");
    }

    @Test
    void aRedirectToTheMetadataServiceIsRefused() {
        JsonNode error =
                refused(http, "rlm_load_url", Map.of("url", webBase + "/to-metadata", "name", "v"), "URL_REFUSED");
        assertThat(error.path("message").asText()).contains("169.254.169.254", "redirect");
    }

    @Test
    void theTransferCapIsEnforced() {
        JsonNode error = refused(strict, "rlm_load_s3", Map.of("key", "big/two-mib.txt", "name", "v"), "TOO_LARGE");
        assertThat(error.path("fix").asText()).contains("--max-transfer-mb");
        assertThat(run(strict, "print('v' in globals())")).isEqualTo("False\n");
    }
}
