package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every way in (a file the kernel reads, a stream as S3 and URL loads send it, inline data) gives
 * the value python3 itself makes of the same bytes: text decoded as UTF-8 with invalid bytes as
 * U+FFFD and line ends kept; lines split where "\n" or "\r\n" ends one (a lone "\r" does not); csv
 * as csv.DictReader over the file opened with newline=""; json as json.loads. Streams are cut in
 * 1 MiB chunks, so the inputs put a character, a "\r\n" and a quoted csv field across those cuts.
 */
class LoadParityTest {

    private static final int CHUNK = 1 << 20;
    /** The reference parse, in the kernel: python3 on the bytes of the file. */
    private static final String REFERENCE = """
            import csv, io, json, sys
            def _reference(path, data_type):
                text = open(path, 'rb').read().decode('utf-8', 'replace')
                if data_type == 'text':
                    return text
                if data_type == 'lines':
                    *whole, last = text.split('\\n')
                    return [l[:-1] if l.endswith('\\r') else l for l in whole] + ([last] if last else [])
                if data_type == 'csv':
                    return list(csv.DictReader(io.StringIO(text, newline='')))
                return json.loads(text)
            def _exact_size(lines):
                return sys.getsizeof(lines) + sum(map(sys.getsizeof, lines))
            """;

    @TempDir
    Path dir;

    Sessions sessions;
    Session session;

    @BeforeEach
    void start() {
        sessions = new Sessions(
                new KernelFactory(TestSettings.in(dir, 256L * 1024 * 1024), new ProcessLauncher(), new ObjectMapper()));
        session = sessions.resolve(null, "test");
        run(REFERENCE);
    }

    @AfterEach
    void stop() {
        sessions.close();
    }

    private String run(String code) {
        ObjectNode reply = TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(60))));
        assertThat(reply.path("error").isObject()).as("%s", reply).isFalse();
        return reply.path("stdout").asText();
    }

    /** Bytes with {@code atCut} placed so that it straddles the n-th 1 MiB chunk boundary. */
    private static void straddle(ByteArrayOutputStream out, int n, byte[] atCut, byte filler) {
        int until = n * CHUNK - atCut.length / 2 - out.size();
        for (int i = 0; i < until; i++) {
            out.write(filler);
        }
        out.writeBytes(atCut);
    }

    private static byte[] utf8(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    /** Loads {@code bytes} every way as {@code type}, each time comparing the value with python3's parse. */
    private void sameAsPython(String name, byte[] bytes, DataType type, boolean inline) throws Exception {
        Path file = dir.resolve(name);
        Files.write(file, bytes);
        String check = "print(v == _reference(%s, '%s'))".formatted(pyString(file.toString()), type.wireName());
        String[] sources = inline ? new String[] {"file", "s3", "url", "data"} : new String[] {"file", "s3", "url"};
        for (String source : sources) {
            ObjectNode reply = TestReplies.load(
                    switch (source) {
                        case "file" -> session.loadFile("v", file, name, type, CallContext.NONE);
                        case "s3" ->
                            session.loadStream(
                                    "v",
                                    type,
                                    new Download(
                                            new ByteArrayInputStream(bytes), bytes.length, "s3://test/" + name, null),
                                    "key",
                                    "t",
                                    CallContext.NONE);
                        case "url" ->
                            session.loadStream(
                                    "v",
                                    type,
                                    new Download(new ByteArrayInputStream(bytes), -1, "http://test/" + name, null),
                                    "url",
                                    "t",
                                    CallContext.NONE);
                        default ->
                            session.loadData("v", new String(bytes, StandardCharsets.UTF_8), type, CallContext.NONE);
                    });
            assertThat(run(check)).as("%s %s from %s", name, type, source).isEqualTo("True\n");
            if (type == DataType.LINES) {
                assertThat(run("print(_exact_size(v))"))
                        .as("size of %s from %s", name, source)
                        .isEqualTo(reply.path("size_bytes").asLong() + "\n");
            }
        }
    }

    private static String pyString(String s) {
        return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    @Test
    void textAndLinesAreWhatPythonMakesOfTheSameBytes() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(utf8("first\r\nlone\rcarriage\r\n\n\nempty lines above\u000b\u001c\u2028 not line ends\n"));
        straddle(out, 1, utf8("😀"), (byte) 'a'); // a 4-byte character cut between chunks
        out.writeBytes(utf8("\r\n"));
        straddle(out, 2, utf8("\r\n"), (byte) 'b'); // a "\r\n" cut between chunks
        out.writeBytes(utf8("é€\r\r\n"));
        straddle(out, 3, new byte[] {'\r', '\n', '\n'}, (byte) 'c');
        out.writeBytes(utf8("last line, no final newline\r"));
        byte[] valid = out.toByteArray();
        sameAsPython("valid.txt", valid, DataType.TEXT, true);
        sameAsPython("valid.txt", valid, DataType.LINES, true);

        ByteArrayOutputStream bad = new ByteArrayOutputStream();
        bad.writeBytes(utf8("ok\n"));
        bad.write(0xff); // never valid
        bad.writeBytes(utf8("\r\n"));
        straddle(bad, 1, new byte[] {(byte) 0xe2, (byte) 0x82, '\n'}, (byte) 'd'); // a truncated character at a cut
        straddle(bad, 2, new byte[] {(byte) 0xf0, (byte) 0x9f, (byte) 0x98, (byte) 0x80}, (byte) 'e');
        bad.writeBytes(new byte[] {'\n', (byte) 0xed, (byte) 0xa0, (byte) 0x80, '\n', (byte) 0xe2, (byte) 0x82});
        byte[] invalid = bad.toByteArray();
        sameAsPython("invalid.txt", invalid, DataType.TEXT, false);
        sameAsPython("invalid.txt", invalid, DataType.LINES, false);
        assertThat(run("print(v[-1] == '\\ufffd', v[0])")).isEqualTo("True ok\n");

        for (String small : new String[] {"", "\n", "\r\n", "\r", "x", "x\r", "\n\n", "a\r\r\nb\n\rc"}) {
            sameAsPython("small.txt", utf8(small), DataType.LINES, true);
        }
    }

    @Test
    void csvAndJsonAreWhatPythonMakesOfTheSameBytes() throws Exception {
        ByteArrayOutputStream csv = new ByteArrayOutputStream();
        csv.writeBytes(utf8("name,note\r\nplain,one\r\n\r\nquoted,\"a \"\"b\"\"\r\nsecond line\nthird\rfourth\"\r\n"));
        int rows = (CHUNK - 64 - csv.size()) / 10;
        for (int i = 0; i < rows; i++) {
            csv.writeBytes(utf8("row,fill\r\n"));
        }
        csv.writeBytes(utf8("cut,\""));
        straddle(csv, 1, utf8("é😀,\r\n"), (byte) 'x'); // a quoted field across a cut
        csv.writeBytes(utf8("\"\r\nlf,only\ncr,only\rlast,row"));
        sameAsPython("table.csv", csv.toByteArray(), DataType.CSV, true);
        assertThat(run("print(len(v) - %d, v[-1], v[-4]['note'].endswith('xé😀,\\r\\n'), v[1]['note'])"
                        .formatted(rows)))
                .isEqualTo("6 {'name': 'last', 'note': 'row'} True a \"b\"\r\nsecond line\nthird\rfourth\n");

        ByteArrayOutputStream json = new ByteArrayOutputStream();
        json.writeBytes(utf8("{\r\n  \"s\": \"é\\u00e9\\ud83d\\ude00\",\r\n  \"big\": \""));
        straddle(json, 1, utf8("😀€"), (byte) 'j');
        json.writeBytes(utf8("\",\n  \"n\": [1, 2.5, null, true]\r\n}\r\n"));
        sameAsPython("doc.json", json.toByteArray(), DataType.JSON, true);
        assertThat(run("print(v['s'], v['n'])")).isEqualTo("éé😀 [1, 2.5, None, True]\n");
    }
}
