package dev.rlmmcp.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.store.StateStore;
import dev.rlmmcp.transport.http.HttpEndpoint;
import dev.rlmmcp.transport.http.HttpSettings;
import dev.rlmmcp.transport.stdio.StartupAnswers;
import dev.rlmmcp.transport.stdio.StdioEndpoint;
import dev.rlmmcp.transport.stdio.StdioFront;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * A short scripted session that touches the start-up and first-call paths, then makes new sessions
 * and run_python calls, run by bin/rlm-mcp to record the JVM's AOT / class-data cache (with JDK 25,
 * the method profiles too) so that later starts, and their first sessions, are fast.
 */
@Command(name = "train", hidden = true, description = "Exercise start-up paths once (for the JVM's AOT cache).")
final class TrainCommand implements Callable<Integer> {

    private static final List<String> SCRIPT = List.of("""
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"train","version":"1"}}}""", """
            {"jsonrpc":"2.0","method":"notifications/initialized"}""", """
            {"jsonrpc":"2.0","id":2,"method":"tools/list"}""", """
            {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"rlm_execute","arguments":{"code":"x = 1"}}}""", """
            {"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"rlm_load_data","arguments":{"name":"d","data":"a\\nb","data_type":"lines"}}}""", """
            {"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"rlm_list_vars","arguments":{}}}""");

    /** New sessions and run_python calls the training makes, so that their paths are in the cache's profiles. */
    private static final int SESSIONS = 40;

    @Spec
    CommandSpec spec;

    @Mixin
    KernelOptions kernel;

    @Override
    public Integer call() throws Exception {
        Settings settings = kernel.settings(spec);
        // a throwaway state store, so that opening SQLite and snapshotting are in the cache too
        Path state = Files.createTempDirectory("rlm-train-state-");
        try (Assembly app = Assembly.of(
                settings,
                kernel.hostPolicy(spec, settings),
                CompletableFuture.completedFuture(StateStore.open(state, Duration.ZERO)))) {
            // the answers a stdio start gives before the server is ready are kept, then given by a front
            Path kept = state.resolve("startup-answers.tsv");
            stdio(app, kept);
            fronts(app, kept);
            health(app);
            stdioCommand(state.resolve("stdio"));
        } finally {
            try (Stream<Path> tree = Files.walk(state)) {
                tree.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
        return 0;
    }

    /** The script and the new sessions over a stdio server, keeping its start-up answers in {@code kept}. */
    private static void stdio(Assembly app, Path kept) throws Exception {
        PipedOutputStream toServer = new PipedOutputStream();
        PipedInputStream serverIn = new PipedInputStream(toServer, 1 << 16);
        PipedOutputStream serverOut = new PipedOutputStream();
        PipedInputStream fromServer = new PipedInputStream(serverOut, 1 << 16);
        StartupAnswers keeping = StartupAnswers.in(kept);
        StdioEndpoint endpoint = new StdioEndpoint(
                app.servers(), serverIn, serverOut, 1 << 20, CompletableFuture.completedFuture(null), keeping);
        BufferedReader replies = new BufferedReader(new InputStreamReader(fromServer, StandardCharsets.UTF_8));
        for (String line : SCRIPT) {
            send(toServer, line);
            if (line.contains("\"id\"")) {
                replies.readLine();
            }
        }
        sessions(toServer, replies, app.json());
        toServer.close();
        endpoint.awaitClientGone();
        endpoint.close();
        keeping.save();
    }

    /** {@link #SESSIONS} new sessions, each with a REPL call, and as many run_python calls. */
    private static void sessions(OutputStream toServer, BufferedReader replies, ObjectMapper json)
            throws java.io.IOException {
        for (int i = 0; i < SESSIONS; i++) {
            send(toServer, call(100 + 3 * i, "rlm_init_context", "{\"response_format\":\"json\"}"));
            JsonNode made = json.readTree(replies.readLine());
            String id = json.readTree(made.path("result")
                            .path("content")
                            .path(0)
                            .path("text")
                            .asText())
                    .path("session_id")
                    .asText();
            send(toServer, call(101 + 3 * i, "rlm_run_repl", "{\"session_id\":\"" + id + "\",\"code\":\"x = 1\"}"));
            replies.readLine();
            send(toServer, call(102 + 3 * i, "run_python", "{\"code\":\"print(1)\"}"));
            replies.readLine();
        }
    }

    /** One health request over HTTP, so that the HTTP server's start-up is in the cache too. */
    private static void health(Assembly app) throws Exception {
        try (HttpEndpoint http =
                        new HttpEndpoint(app.servers(), app.sessions(), app.json(), HttpSettings.local(0, 1 << 20));
                HttpClient client = HttpClient.newHttpClient()) {
            http.start();
            URI health = URI.create("http://127.0.0.1:" + http.address().getPort() + "/health");
            client.send(HttpRequest.newBuilder(health).build(), HttpResponse.BodyHandlers.ofString());
        }
    }

    /**
     * A stdio server started as {@code rlm-mcp stdio} starts one, on pipes, as a configuration's first start:
     * the command line read, the answers its front gives made from the tools, then the server built.
     */
    private static void stdioCommand(Path state) throws Exception {
        Files.createDirectories(state);
        PipedOutputStream toFront = new PipedOutputStream();
        PipedInputStream frontIn = new PipedInputStream(toFront, 1 << 16);
        PipedOutputStream frontOut = new PipedOutputStream();
        BlockingQueue<String> replies = lines(new PipedInputStream(frontOut, 1 << 16));
        CommandLine cmd = Main.commandLine("stdio");
        StdioCommand stdio = (StdioCommand) cmd.getSubcommands().get("stdio").getCommand();
        stdio.front = StdioFront.start(frontIn, frontOut, stdio.answers);
        PrintStream out = System.out;
        // its own data root and state directory: the environment's may name ones gone since (a test's)
        Thread server = Thread.ofPlatform()
                .name("train-stdio")
                .start(() -> cmd.execute("stdio", "--state-dir=" + state, "--data-root=" + state, "--warm-kernels=0"));
        try {
            for (String line : SCRIPT) {
                send(toFront, line);
                if (line.contains("\"id\"") && replies.poll(1, TimeUnit.MINUTES) == null) {
                    break; // not answered: the training goes on without the rest of this part
                }
            }
            toFront.close();
            server.join(Duration.ofMinutes(1));
        } finally {
            System.setOut(out);
        }
    }

    /** The lines read from {@code in}, as they come. */
    private static BlockingQueue<String> lines(InputStream in) {
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = reader.readLine()) != null; ) {
                    lines.add(line);
                }
            } catch (java.io.IOException e) {
                // the server's side is gone
            }
        });
        return lines;
    }

    /**
     * {@link StdioFront}s answering initialize and tools/list: from the answers the session above kept, as a
     * later start does, and from answers made from the tools, as a configuration's first start does.
     */
    private static void fronts(Assembly app, Path kept) throws java.io.IOException {
        StartupKey.file(new String[] {"stdio"});
        front(StartupAnswers.in(kept), null);
        front(StartupAnswers.none(), app);
    }

    /** One front; with {@code app}, offered the answers made from its tools once the requests are read. */
    private static void front(StartupAnswers answers, Assembly app) throws java.io.IOException {
        PipedOutputStream toFront = new PipedOutputStream();
        PipedInputStream frontIn = new PipedInputStream(toFront, 1 << 16);
        PipedOutputStream frontOut = new PipedOutputStream();
        BufferedReader replies = new BufferedReader(
                new InputStreamReader(new PipedInputStream(frontOut, 1 << 16), StandardCharsets.UTF_8));
        StdioFront front = StdioFront.start(frontIn, frontOut, answers);
        for (String line : SCRIPT.subList(0, 3)) {
            send(toFront, line);
        }
        if (app != null) {
            front.offer(app.servers());
        }
        if (app != null || !answers.isEmpty()) {
            replies.readLine(); // initialize
            replies.readLine(); // tools/list
        }
        toFront.close();
        front.input().readAllBytes();
    }

    private static String call(int id, String tool, String arguments) {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool
                + "\",\"arguments\":" + arguments + "}}";
    }

    private static void send(OutputStream out, String line) throws java.io.IOException {
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }
}
