package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.cluster.McpSessionHomes;
import dev.rlmmcp.cluster.PeerAuth;
import dev.rlmmcp.cluster.Router;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import dev.rlmmcp.tools.ToolCatalog;
import dev.rlmmcp.transport.McpServers;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster node closing while requests keep arriving on new connections, as nginx sends them (one connection
 * per request, the request sent as soon as the connection is up): each must be refused at connect (nginx
 * passes it on safely) or answered. Before the ports were drained and closed by {@link PortCloser}, some
 * connections Jetty had accepted were never answered (they hung until the process exited, then were reset:
 * nginx's own 502, "may have run"); that is what this checks. A connection the kernel completes in the instant
 * the port closes is still reset; the test counts those and only lists them.
 */
class ClosingPortsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ROUNDS = 8;
    private static final int SENDERS = 6;

    @TempDir
    Path dir;

    @Test
    void aClosingNodeAnswersEveryConnectionItAccepted() throws Exception {
        AtomicInteger answered = new AtomicInteger();
        AtomicInteger refused = new AtomicInteger();
        ConcurrentLinkedQueue<String> lost = new ConcurrentLinkedQueue<>();
        for (int round = 0; round < ROUNDS; round++) {
            try (Sessions sessions =
                    new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON))) {
                HttpEndpoint endpoint = endpoint(sessions);
                endpoint.drainFor(100, 300);
                endpoint.start();
                AtomicBoolean open = new AtomicBoolean(true);
                List<Thread> senders = new ArrayList<>();
                for (int s = 0; s < SENDERS; s++) {
                    InetSocketAddress[] ports = {endpoint.address(), endpoint.peerAddress()};
                    InetSocketAddress port = ports[s % 2];
                    senders.add(Thread.ofPlatform().start(() -> {
                        while (open.get()) {
                            switch (send(port)) {
                                case "answered" -> answered.incrementAndGet();
                                case "refused", "reset before the request was sent" -> refused.incrementAndGet();
                                case String other -> lost.add(other);
                            }
                        }
                    }));
                }
                Thread.sleep(150);
                endpoint.close();
                Thread.sleep(50);
                open.set(false);
                for (Thread sender : senders) {
                    sender.join();
                }
            }
        }
        Map<String, Long> kinds =
                lost.stream().collect(Collectors.groupingBy(k -> k, TreeMap::new, Collectors.counting()));
        // A connection the port's close catches mid-handshake is still reset by the kernel (see PortCloser):
        // under this test's flood of connects (thousands a second) a few per close; never one the node accepted.
        kinds.keySet().removeIf(kind -> kind.endsWith("Connection reset"));
        assertThat(kinds)
                .as(
                        "requests accepted and then left unanswered or closed (nginx: 502); %d answered, %d refused, "
                                + "%d reset",
                        answered.get(), refused.get(), lost.size())
                .isEmpty();
        assertThat(answered.get()).isPositive();
    }

    /** One request on a fresh connection: answered, refused at connect, or what else happened. */
    private static String send(InetSocketAddress port) {
        try (Socket socket = new Socket()) {
            try {
                socket.connect(port, 2000);
            } catch (ConnectException e) {
                return "refused";
            }
            socket.setSoTimeout(10_000);
            String body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}";
            String request = "POST /rpc HTTP/1.1\r\nHost: 127.0.0.1:" + port.getPort()
                    + "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + body.length()
                    + "\r\n\r\n" + body;
            try {
                socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            } catch (IOException e) {
                // Reset before the request left: nginx has not passed the request on, so it tries the next node.
                return "reset before the request was sent";
            }
            InputStream in = socket.getInputStream();
            byte[] head = in.readNBytes(9);
            String status = new String(head, StandardCharsets.US_ASCII);
            return status.startsWith("HTTP/1.1 ") ? "answered" : "closed unanswered after the request was sent";
        } catch (IOException e) {
            return "after the request was sent: " + e;
        }
    }

    private static HttpEndpoint endpoint(Sessions sessions) {
        McpServers servers = new McpServers(new ToolCatalog(List.of(), JSON), JSON, McpServers.Features.NONE);
        PeerChannel cluster = new PeerChannel(
                router(), homes(), new PeerAuth("the closing test cluster secret", "n1"), "127.0.0.1", 0);
        return new HttpEndpoint(servers, sessions, JSON, HttpSettings.local(0, 1 << 20), cluster);
    }

    private static Router router() {
        return new Router() {
            @Override
            public Route route(String sessionId) {
                return new Local();
            }

            @Override
            public Route routeMcpSession(String mcpSessionId) {
                return new Local();
            }

            @Override
            public String nodeId() {
                return "n1";
            }

            @Override
            public boolean serving() {
                return true;
            }
        };
    }

    private static McpSessionHomes homes() {
        return new McpSessionHomes() {
            @Override
            public void record(String mcpSessionId, String initializeJson) {}

            @Override
            public Optional<String> initialize(String mcpSessionId) {
                return Optional.empty();
            }

            @Override
            public void forget(String mcpSessionId) {}
        };
    }
}
