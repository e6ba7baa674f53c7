package dev.rlmmcp.cli;

import dev.rlmmcp.face.StdioFace;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

@Command(name = "stdio", mixinStandardHelpOptions = true,
        description = "Serve MCP over stdin/stdout (for Claude Code, Codex, Cursor...). Logs go to stderr.")
final class StdioCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Mixin
    KernelOptions kernel;

    @Option(names = "--max-request-mb", paramLabel = "MB", defaultValue = "${env:RLM_MAX_REQUEST_MB:-512}",
            description = "Largest single MCP message accepted, e.g. for inline rlm_load_data (RLM_MAX_REQUEST_MB; default: ${DEFAULT-VALUE}).")
    int maxRequestMb;

    @Override
    public Integer call() throws InterruptedException {
        KernelOptions.require(spec, maxRequestMb >= 1 && maxRequestMb <= 2047, "--max-request-mb must be 1..2047");
        PrintStream protocol = System.out;
        System.setOut(System.err);
        CountDownLatch closed = new CountDownLatch(1);
        try (Assembly app = Assembly.of(kernel.settings(spec))) {
            StdioFace.start(app.servers(), new EofSignal(System.in, closed), protocol, maxRequestMb * 1024 * 1024);
            closed.await();
        }
        return 0;
    }

    /** Counts down when the client closes our stdin: the end of the session. */
    private static final class EofSignal extends FilterInputStream {

        private final CountDownLatch closed;

        EofSignal(InputStream in, CountDownLatch closed) {
            super(in);
            this.closed = closed;
        }

        @Override
        public int read() throws IOException {
            return eof(super.read());
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            return eof(super.read(b, off, len));
        }

        private int eof(int n) {
            if (n < 0) {
                closed.countDown();
            }
            return n;
        }
    }
}
