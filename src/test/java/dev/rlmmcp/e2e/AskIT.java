package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.e2e.support.Journey;
import dev.rlmmcp.e2e.support.Kernels;
import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ScriptedRlm;
import dev.rlmmcp.e2e.support.UserLaunch;
import dev.rlmmcp.llm.ChatCompletionsServer;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/rlm-mcp ask as a person at a terminal runs it: a process with the default sandbox and state
 * directory (under its own XDG_DATA_HOME), the model a scripted OpenAI-compatible endpoint on a real
 * socket. The answer on stdout, progress and figures on stderr, the exit code, and Ctrl-C (SIGINT).
 */
class AskIT {

    @TempDir
    Path tmp;

    record Ran(int exit, String stdout, String stderr) {}

    /** bin/rlm-mcp ask with {@code args}, in {@code tmp} (the default data root). */
    private Process start(ChatCompletionsServer api, String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of(
                McpDriver.projectRoot().resolve("bin/rlm-mcp").toString(),
                "ask",
                "--llm-base-url",
                api.baseUrl().toString(),
                "--llm-model",
                "scripted"));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(tmp.toFile());
        builder.environment().put("XDG_DATA_HOME", tmp.resolve("xdg").toString());
        return builder.start();
    }

    private static CompletableFuture<String> read(InputStream in) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
    }

    private Ran run(ChatCompletionsServer api, String... args) throws Exception {
        Process process = start(api, args);
        process.getOutputStream().close();
        CompletableFuture<String> out = read(process.getInputStream());
        CompletableFuture<String> err = read(process.getErrorStream());
        assertThat(process.waitFor(3, TimeUnit.MINUTES)).isTrue();
        return new Ran(process.exitValue(), out.get(), err.get());
    }

    @Test
    void theAnswerGoesToStdoutAndTheProgressAndFiguresToStderr() throws Exception {
        RlmSolveIT.log(tmp);
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            api.behaviour = new ScriptedRlm(0, 300);
            Ran ran = run(api, "--file", "server.log", "--trajectory", "run.jsonl", ScriptedRlm.COUNT_ERRORS);
            assertThat(ran.exit()).as(ran.stderr()).isZero();
            assertThat(ran.stdout()).isEqualTo(RlmSolveIT.ERRORS + "\n");
            List<String> lines = ran.stderr().lines().toList();
            // the trajectory as alexzhang13/rlm's logger writes it: metadata, then the root's two iterations
            List<com.fasterxml.jackson.databind.JsonNode> jsonl = new ArrayList<>();
            for (String line : Files.readAllLines(tmp.resolve("run.jsonl"))) {
                jsonl.add(McpDriver.MAPPER.readTree(line));
            }
            assertThat(jsonl)
                    .extracting(j -> j.path("type").asText())
                    .containsExactly("metadata", "iteration", "iteration");
            assertThat(jsonl.get(2).toString()).contains("rlm_calls", ScriptedRlm.CHILD_COUNT.replace(".", ""));
            assertThat(lines).contains("rlm-mcp ask: trajectory written to run.jsonl");
            // stderr is a pipe here: plain progress lines, no carriage returns
            assertThat(ran.stderr()).doesNotContain("\r");
            assertThat(lines).contains("rlm-mcp ask: loading " + tmp.resolve("server.log"));
            assertThat(lines)
                    .anySatisfy(
                            l -> assertThat(l)
                                    .matches(
                                            "rlm-mcp ask: iteration \\d+, depth \\d, \\d+ child(ren)? running, [\\d,]+ tokens"));
            assertThat(lines)
                    .anySatisfy(l -> assertThat(l)
                            .startsWith("rlm-mcp ask: 6 iterations, 4 children, depth 1 reached, ")
                            .contains(" input + ", "cost unknown"));
            assertThat(lines.getLast()).matches("rlm-mcp ask: session \\S+, trajectory in trace entry \\d+");
            // the default state directory, under XDG_DATA_HOME: the session and its trace are kept there
            assertThat(tmp.resolve("xdg/rlm-mcp/projects")).isDirectory();
        }
    }

    @Test
    void aUrlIsTheContext() throws Exception {
        byte[] log = Files.readAllBytes(RlmSolveIT.log(tmp));
        com.sun.net.httpserver.HttpServer web = com.sun.net.httpserver.HttpServer.create(
                new java.net.InetSocketAddress(java.net.InetAddress.getLoopbackAddress(), 0), 8);
        web.createContext("/server.log", exchange -> {
            try (exchange) {
                exchange.sendResponseHeaders(200, log.length);
                exchange.getResponseBody().write(log);
            }
        });
        web.start();
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            api.behaviour = new ScriptedRlm(0, 0);
            Ran ran = run(
                    api,
                    "--url",
                    "http://127.0.0.1:" + web.getAddress().getPort() + "/server.log",
                    "--allow-private-urls",
                    ScriptedRlm.COUNT_ERRORS);
            assertThat(ran.exit()).as(ran.stderr()).isZero();
            assertThat(ran.stdout()).isEqualTo(RlmSolveIT.ERRORS + "\n");
        } finally {
            web.stop(0);
        }
    }

    /** On a terminal (a pty, as `script` gives it) the progress line is redrawn in place with carriage returns. */
    @Test
    void onATerminalTheProgressLineIsRedrawnInPlace() throws Exception {
        RlmSolveIT.log(tmp);
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            api.behaviour = new ScriptedRlm(0, 300);
            String command = String.join(
                    " ",
                    java.util.stream.Stream.of(
                                    McpDriver.projectRoot()
                                            .resolve("bin/rlm-mcp")
                                            .toString(),
                                    "ask",
                                    "--llm-base-url",
                                    api.baseUrl().toString(),
                                    "--llm-model",
                                    "scripted",
                                    "--file",
                                    "server.log",
                                    ScriptedRlm.COUNT_ERRORS)
                            .map(a -> "'" + a.replace("'", "'\\''") + "'")
                            .toList());
            ProcessBuilder builder =
                    new ProcessBuilder("script", "-qefc", command, "/dev/null").directory(tmp.toFile());
            builder.environment().put("XDG_DATA_HOME", tmp.resolve("xdg").toString());
            Process process = builder.redirectErrorStream(true).start();
            process.getOutputStream().close();
            CompletableFuture<String> out = read(process.getInputStream());
            assertThat(process.waitFor(3, TimeUnit.MINUTES)).isTrue();
            String shown = out.get();
            assertThat(process.exitValue()).as(shown).isZero();
            assertThat(shown)
                    .contains(
                            "\rrlm-mcp ask: iteration ",
                            "\r" + RlmSolveIT.ERRORS + "\r\n",
                            "rlm-mcp ask: 6 iterations, 4 children");
            // every drawing of the line is followed by the next one's carriage return, never by a new line
            assertThat(java.util.regex.Pattern.compile("rlm-mcp ask: iteration [^\\r\\n]*\\r?\\n")
                            .matcher(shown)
                            .find())
                    .as(shown)
                    .isFalse();
        }
    }

    /**
     * A user who is not root, with every default: bin/rlm-mcp from a copy of the distribution it can read,
     * the sandbox, the data root (the working directory, deep in its home) and its own state directory.
     */
    @Test
    void aUserWhoIsNotRootAsksWithEveryDefault() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(Journey.isRoot(), "creating the user account needs root");
        Path home = Journey.ensureUser();
        Path dist = Journey.distribution(Files.createTempDirectory("rlm-ask-dist-"));
        Path projects = home.resolve("projects");
        Path state = home.resolve(".local/share/rlm-mcp");
        Journey.deleteTree(state);
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            api.behaviour = new ScriptedRlm(0, 0);
            Path data = Journey.dirs(home, "projects", "ask", "logs");
            RlmSolveIT.log(data);
            Journey.chownToUser(projects);
            UserLaunch launch =
                    new UserLaunch(dist.resolve("bin/rlm-mcp"), data, java.util.Map.of(), Journey.USER, home);
            Process process = new ProcessBuilder(launch.command(List.of(
                            "ask",
                            "--llm-base-url",
                            api.baseUrl().toString(),
                            "--llm-model",
                            "scripted",
                            "--file",
                            "server.log",
                            ScriptedRlm.COUNT_ERRORS)))
                    .start();
            process.getOutputStream().close();
            CompletableFuture<String> out = read(process.getInputStream());
            CompletableFuture<String> err = read(process.getErrorStream());
            assertThat(process.waitFor(3, TimeUnit.MINUTES)).isTrue();
            assertThat(process.exitValue()).as(err.get()).isZero();
            assertThat(out.get()).isEqualTo(RlmSolveIT.ERRORS + "\n");
            assertThat(err.get()).contains("rlm-mcp ask: 6 iterations, 4 children, depth 1 reached");
            assertThat(state.resolve("projects")).isDirectory();
        } finally {
            Journey.deleteTree(projects);
            Journey.deleteTree(state);
            Journey.deleteTree(dist);
        }
    }

    @Test
    void aLimitThatStopsTheRunExitsWith3AndTheAnswerSoFar() throws Exception {
        Journey.mode(tmp, "rwxr-xr-x");
        Journey.mode(Files.writeString(tmp.resolve("notes.txt"), "some notes\n"), "rw-r--r--");
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            api.behaviour = new ScriptedRlm(0, 0);
            Ran ran = run(api, "--file", "notes.txt", "--rlm-max-iterations", "2", ScriptedRlm.NEVER_DONE);
            assertThat(ran.exit()).as(ran.stderr()).isEqualTo(3);
            assertThat(ran.stdout()).isEqualTo("partial answer 2\n");
            assertThat(ran.stderr())
                    .contains(
                            "rlm-mcp ask: stopped by max_iterations: ",
                            "(the answer so far is above)",
                            "rlm-mcp ask: 2 iterations, 0 children");
        }
    }

    @Test
    void badArgumentsExitWith2NamingTheOption() throws Exception {
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            Ran noQuestion = run(api, "--file", "x.txt");
            assertThat(noQuestion.exit()).isEqualTo(2);
            assertThat(noQuestion.stderr()).contains("QUESTION");
            Ran both = run(api, "--file", "a", "--url", "https://example.com", "q");
            assertThat(both.exit()).isEqualTo(2);
            assertThat(both.stderr()).contains("--file=FILE, --url=URL are mutually exclusive");
            Ran missing = run(api, "--file", "missing.txt", "q");
            assertThat(missing.exit()).isEqualTo(2);
            assertThat(missing.stderr()).contains("rlm-mcp ask: --file missing.txt is not a readable file");
            Ran trajectory = run(
                    api, "--trajectory", tmp.resolve("no/such/dir/run.jsonl").toString(), "q");
            assertThat(trajectory.exit()).isEqualTo(2);
            assertThat(trajectory.stderr())
                    .contains(
                            "rlm-mcp ask: --trajectory " + tmp.resolve("no/such/dir/run.jsonl") + " cannot be written");
            Ran depth = run(api, "--llm-max-depth", "0", "q");
            assertThat(depth.exit()).isEqualTo(2);
            assertThat(depth.stderr())
                    .contains("rlm-mcp ask: --rlm-max-depth (alias --llm-max-depth) must be at least 1");
            assertThat(api.seen()).isEmpty();
        }
    }

    @Test
    void ctrlCStopsEveryChildAndFreesItsKernelWithinASecondAndExitsWith130() throws Exception {
        Path runtime = Files.createDirectories(tmp.resolve("kernels-rt"));
        Journey.mode(tmp, "rwxr-xr-x");
        Journey.mode(Files.writeString(tmp.resolve("x.txt"), "x"), "rw-r--r--");
        try (ChatCompletionsServer api = new ChatCompletionsServer()) {
            ScriptedRlm model = new ScriptedRlm(0, 0);
            api.behaviour = model;
            Process process = start(
                    api,
                    "--file",
                    "x.txt",
                    "--runtime-dir",
                    runtime.toString(),
                    "--warm-kernels",
                    "0",
                    ScriptedRlm.SLEEPY);
            process.getOutputStream().close();
            CompletableFuture<String> out = read(process.getInputStream());
            CompletableFuture<String> err = read(process.getErrorStream());
            assertThat(Kernels.await(runtime, n -> n >= 4 && model.childTurns.get() == 3, 90_000))
                    .as("the root and three children running their code")
                    .isNotNegative();
            long pid = process.pid();
            long start = System.nanoTime();
            new ProcessBuilder("kill", "-INT", Long.toString(pid)).start().waitFor();
            long children = Kernels.await(runtime, n -> n <= 1, 5_000);
            long all = Kernels.await(runtime, n -> n == 0, 5_000);
            System.err.printf(
                    "[ask] children's kernels freed %d ms after SIGINT, the root's %d ms after them%n", children, all);
            assertThat(children).as("kernels left: " + Kernels.running(runtime)).isBetween(0L, 1_000L);
            assertThat(all).as("kernels left: " + Kernels.running(runtime)).isBetween(0L, 1_000L);
            assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
            System.err.printf("[ask] exited %d ms after SIGINT%n", (System.nanoTime() - start) / 1_000_000);
            assertThat(process.exitValue()).as(err.get()).isEqualTo(130);
            assertThat(out.get()).isNotNull();
        }
    }
}
