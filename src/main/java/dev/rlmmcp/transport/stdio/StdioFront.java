package dev.rlmmcp.transport.stdio;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.ToolOffer;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.LoggerFactory;

/**
 * Reads stdin from the JVM's first moments, while the server starts: answers initialize, ping and the
 * lists from the {@link StartupAnswers} an earlier start kept, or once this start made them from its
 * configuration (a request read before then waits for them), and passes every byte it read on,
 * unchanged and in order, through {@link #input()} to the {@link StdioTransport} that serves the
 * stream once the server is ready (which answers what was not answered here, and checks what was).
 * Its first read of {@link #input()} ends the front: after the read under way, stdin is the
 * transport's alone, so no message crosses a thread once the server is up.
 */
public final class StdioFront {

    /** Longer lines are passed on without a look: no request the front answers is that long. */
    private static final int LONGEST = 1 << 16;

    private final InputStream in;
    private final OutputStream out;
    private final StartupAnswers answers;
    private final Handover handover = new Handover();
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private boolean skipping;
    private final JsonFactory json = new JsonFactory();
    private volatile int answered;
    /** Whether an initialize request was read: the lists of the revisions before 2026-07-28 come after one. */
    private boolean initializeRead;
    /** Whether the initialize read declared sampling: its tools/list answer lists what the client can use. */
    private boolean clientSamples = true;
    /** Requests read before this start made their answers ({@link StartupAnswers#offer}), in order; guarded by handover. */
    private final List<Waiting> waiting = new ArrayList<>();
    /** Open once the client has its tools, or asked for something only the server answers, or left. */
    private final CountDownLatch listed = new CountDownLatch(1);

    private StdioFront(InputStream in, OutputStream out, StartupAnswers answers) {
        this.in = in;
        this.out = out;
        this.answers = answers;
    }

    /** A request the front may answer once the start has made its answers: its id as JSON, and its answer's key. */
    private record Waiting(Object id, byte[] idJson, String key, String method) {}

    /**
     * Starts reading {@code in}; answers go to {@code out}, which the transport must write to as well. What
     * {@code answers} holds is answered at once, what the start makes later ({@link StartupAnswers#offer}) then.
     */
    public static StdioFront start(InputStream in, OutputStream out, StartupAnswers answers) {
        StdioFront front = new StdioFront(in, out, answers);
        answers.onAnswers(front::answerWaiting);
        Thread.ofPlatform().daemon().name("mcp-stdio-front").start(front::run);
        return front;
    }

    /** Everything read from stdin, then stdin itself. */
    public InputStream input() {
        return handover;
    }

    /** Where answers are written (the transport's writes lock it too). */
    public OutputStream output() {
        return out;
    }

    public StartupAnswers answers() {
        return answers;
    }

    /**
     * Gives the answers to initialize and the lists that {@code servers} will give, made from them alone,
     * to requests read before the server is built: a configuration's first start (see
     * {@link StartupAnswers#offer}).
     */
    public void offer(McpServers servers) {
        answers.offer(servers, StdioTransport.VERSIONS);
    }

    /**
     * Waits (at most {@code max}) until the client has listed the tools, asked for something only the
     * server can answer, or closed stdin: what starts the rest of the server would otherwise take the
     * cores from these answers, which the client is waiting for (and a model's first turn with it).
     */
    public void awaitListed(Duration max) throws InterruptedException {
        listed.await(max.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void run() {
        byte[] buffer = new byte[LONGEST];
        try {
            while (true) {
                int n = in.read(buffer);
                if (n < 0) {
                    listed.countDown();
                    handover.end();
                    return;
                }
                boolean released = handover.released();
                if (!released) {
                    answer(buffer, n);
                }
                handover.add(Arrays.copyOf(buffer, n), released);
                if (released) {
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            listed.countDown();
            handover.fail(e);
        }
    }

    /** Answers the complete lines in buffer[0, n) that it can; a line's start may have come in an earlier read. */
    private void answer(byte[] buffer, int n) {
        int start = 0;
        for (int i = 0; i < n; i++) {
            if (buffer[i] == '\n') {
                take(buffer, start, i);
                if (!skipping && line.size() > 0) {
                    answerLine(line.toByteArray());
                }
                line.reset();
                skipping = false;
                start = i + 1;
            }
        }
        take(buffer, start, n);
    }

    private void take(byte[] buffer, int from, int to) {
        if (skipping || from == to) {
            return;
        }
        if (line.size() + to - from > LONGEST) {
            skipping = true;
            line.reset();
        } else {
            line.write(buffer, from, to - from);
        }
    }

    private void answerLine(byte[] bytes) {
        try {
            Object parsed;
            try (JsonParser parser = json.createParser(bytes)) {
                parsed = value(parser, parser.nextToken());
                if (parser.nextToken() != null) {
                    return;
                }
            }
            if (!(parsed instanceof Map<?, ?> message)
                    || !"2.0".equals(message.get("jsonrpc"))
                    || !(message.get("method") instanceof String method)) {
                return;
            }
            Object id = message.get("id");
            if (!(id instanceof String || id instanceof Integer || id instanceof Long)) {
                return;
            }
            if (McpSchema.METHOD_INITIALIZE.equals(method)) {
                initializeRead = true;
                clientSamples = ToolOffer.declaresSampling(message.get("params"));
            }
            String key = StartupAnswers.key(method, message.get("params"));
            if (!initializeRead && StartupAnswers.afterInitialize(key)) {
                key = null; // the server refuses it
            }
            key = StartupAnswers.forClient(key, clientSamples);
            Waiting request = new Waiting(id, idJson(id), key, method);
            synchronized (handover) {
                if (handover.released) {
                    return;
                }
                if (!answer(request)) {
                    if (key != null && !answers.offered()) {
                        waiting.add(request);
                    }
                    if (key == null || !answers.isEmpty()) {
                        listed.countDown(); // the rest of the start answers it: it must not wait for the client
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // not JSON, or stdout is gone: the transport answers or reports it
        }
    }

    /** Answers what waited for the answers this start made, unless the server took over stdin. */
    private void answerWaiting() {
        synchronized (handover) {
            if (handover.released) {
                return;
            }
            waiting.removeIf(this::answer);
            if (answers.offered() && !waiting.isEmpty()) {
                waiting.clear(); // the server answers these
                listed.countDown();
            }
        }
    }

    /** Writes the answer to {@code request} if there is one; called with the handover's lock held, before its release. */
    private boolean answer(Waiting request) {
        byte[] answer = answers.answer(request.key(), request.idJson());
        if (answer == null) {
            return false;
        }
        answers.answeredEarly(request.id(), answer);
        try {
            synchronized (out) {
                out.write(answer);
                out.write('\n');
                out.flush();
            }
        } catch (IOException e) {
            // stdout is gone: the transport reports it
        }
        answered++;
        if (McpSchema.METHOD_TOOLS_LIST.equals(request.method())) {
            listed.countDown();
        }
        return true;
    }

    /**
     * A JSON value as Jackson's ObjectMapper reads one into Object (maps, lists, strings, Integer or Long or
     * BigInteger, Double, booleans, null), with no ObjectMapper to build: this runs as the JVM starts.
     */
    private static Object value(JsonParser parser, JsonToken token) throws IOException {
        if (token == null) {
            throw new IOException("no value");
        }
        return switch (token) {
            case START_OBJECT -> {
                Map<String, Object> map = new LinkedHashMap<>();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
                    String name = parser.currentName();
                    map.put(name, value(parser, parser.nextToken()));
                }
                yield map;
            }
            case START_ARRAY -> {
                List<Object> list = new ArrayList<>();
                for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
                    list.add(value(parser, t));
                }
                yield list;
            }
            case VALUE_STRING -> parser.getText();
            case VALUE_NUMBER_INT -> parser.getNumberValue();
            case VALUE_NUMBER_FLOAT -> parser.getDoubleValue();
            case VALUE_TRUE -> true;
            case VALUE_FALSE -> false;
            case VALUE_NULL -> null;
            default -> throw new IOException("unexpected " + token);
        };
    }

    /** The id as the server's JSON writer writes it. */
    private byte[] idJson(Object id) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (JsonGenerator generator = json.createGenerator(out)) {
            if (id instanceof String text) {
                generator.writeString(text);
            } else {
                generator.writeNumber(((Number) id).longValue());
            }
        }
        return out.toByteArray();
    }

    /** What the front read, handed to the transport; its first read ends the front's answering. */
    private final class Handover extends InputStream {

        private final ArrayDeque<byte[]> chunks = new ArrayDeque<>();
        private int position;
        private boolean released;
        private boolean direct;
        private boolean ended;
        private IOException failed;

        synchronized boolean released() {
            return released;
        }

        /** The transport's first read: the server is up, and answers from now on. */
        private void release() {
            synchronized (this) {
                released = true;
            }
            if (answered > 0) {
                LoggerFactory.getLogger(StdioFront.class)
                        .info("answered {} requests (initialize, the lists) while the server started", answered);
            }
        }

        synchronized void add(byte[] chunk, boolean last) {
            chunks.add(chunk);
            direct = last;
            notifyAll();
        }

        synchronized void end() {
            ended = true;
            notifyAll();
        }

        synchronized void fail(Exception e) {
            failed = e instanceof IOException io ? io : new IOException(e);
            notifyAll();
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            if (!released()) {
                release();
            }
            synchronized (this) {
                while (chunks.isEmpty() && !direct && !ended && failed == null) {
                    try {
                        wait();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IOException("interrupted", e);
                    }
                }
                if (!chunks.isEmpty()) {
                    byte[] chunk = chunks.peek();
                    int n = Math.min(len, chunk.length - position);
                    System.arraycopy(chunk, position, b, off, n);
                    position += n;
                    if (position == chunk.length) {
                        chunks.poll();
                        position = 0;
                    }
                    return n;
                }
                if (failed != null) {
                    throw failed;
                }
                if (ended) {
                    return -1;
                }
            }
            return in.read(b, off, len);
        }
    }
}
