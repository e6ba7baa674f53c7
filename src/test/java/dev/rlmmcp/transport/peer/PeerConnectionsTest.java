package dev.rlmmcp.transport.peer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.rlmmcp.cluster.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The pooled peer connections against scripted peers on a loopback socket. */
class PeerConnectionsTest {

    private final PeerConnections connections = new PeerConnections();

    private static PeerConnections.Request post() {
        return new PeerConnections.Request("POST", "/mcp", List.of(), "{}".getBytes(StandardCharsets.UTF_8));
    }

    private static Router.Remote peer(ServerSocket server) {
        return new Router.Remote("node-p", "127.0.0.1:" + server.getLocalPort());
    }

    /** Serves each connection with {@code script}, counting connections. */
    private static AtomicInteger serve(ServerSocket server, Script script) {
        AtomicInteger accepted = new AtomicInteger();
        Thread.ofVirtual().start(() -> {
            try {
                while (true) {
                    Socket socket = server.accept();
                    accepted.incrementAndGet();
                    Thread.ofVirtual().start(() -> {
                        try (socket) {
                            script.run(socket.getInputStream(), socket.getOutputStream());
                        } catch (IOException | InterruptedException e) {
                            // the client went away
                        }
                    });
                }
            } catch (IOException e) {
                // the test is over
            }
        });
        return accepted;
    }

    interface Script {
        void run(InputStream in, OutputStream out) throws IOException, InterruptedException;
    }

    /** Reads one request of this test's shape (its 2-byte body included). */
    private static void request(InputStream in) throws IOException {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                throw new IOException("closed");
            }
            head.append((char) c);
        }
        in.readNBytes(2);
    }

    private static String read(PeerProxy.Answer answer) throws IOException {
        try (InputStream body = answer.body()) {
            return new String(body.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    @Test
    void aConnectionThePeerClosedWhileIdleIsReplacedAndTheRequestSentAgain() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            AtomicInteger accepted = serve(server, (in, out) -> {
                request(in);
                out.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".getBytes(StandardCharsets.US_ASCII));
                out.flush(); // then closed, as a peer does with an idle connection
            });
            assertThat(read(connections.send(post(), peer(server), () -> true))).isEqualTo("ok");
            Thread.sleep(100);
            assertThat(read(connections.send(post(), peer(server), () -> true))).isEqualTo("ok");
            assertThat(accepted.get()).isEqualTo(2);
        }
    }

    @Test
    void aChunkedStreamIsPassedOnChunkByChunkAndItsConnectionReused() throws Exception {
        CountDownLatch more = new CountDownLatch(1);
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            AtomicInteger accepted = serve(server, (in, out) -> {
                request(in);
                // as Jetty does: a chunk's closing CRLF goes out with the next chunk
                out.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello"
                        .getBytes(StandardCharsets.US_ASCII));
                out.flush();
                more.await(5, TimeUnit.SECONDS);
                out.write("\r\n6\r\n world\r\n0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                request(in);
                out.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
                in.read();
            });
            PeerProxy.Answer answer = connections.send(post(), peer(server), () -> true);
            byte[] first = new byte[64];
            assertThat(new String(first, 0, answer.body().read(first, 0, 64), StandardCharsets.US_ASCII))
                    .isEqualTo("hello");
            more.countDown();
            assertThat(read(answer)).isEqualTo(" world");
            assertThat(read(connections.send(post(), peer(server), () -> true))).isEmpty();
            assertThat(accepted.get()).isEqualTo(1);
        }
    }

    @Test
    void aPeerThatReceivedTheRequestAndNeverAnswersIsGivenUpAsMayHaveRunOnceTheClusterNoLongerNamesIt()
            throws Exception {
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            serve(server, (in, out) -> in.transferTo(OutputStream.nullOutputStream()));
            long start = System.nanoTime();
            long leaseEnds = start + Duration.ofMillis(800).toNanos();
            assertThatThrownBy(() -> connections.send(post(), peer(server), () -> System.nanoTime() < leaseEnds))
                    .as("it was written: never sent again, the caller answers that it may have run")
                    .isInstanceOf(PeerProxy.Unanswered.class);
            Duration waited = Duration.ofNanos(System.nanoTime() - start);
            assertThat(waited).isGreaterThanOrEqualTo(Reroute.PATIENCE);
            assertThat(waited)
                    .isLessThan(Duration.ofMillis(800).plus(Reroute.PATIENCE).plusSeconds(2));
        }
    }
}
