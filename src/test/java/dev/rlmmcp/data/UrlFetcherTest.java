package dev.rlmmcp.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLSocketFactory;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The URL fetcher against a real HTTP server on loopback, and the address checks that guard it. */
class UrlFetcherTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static HttpServer server;
    private static String base;
    private static final AtomicReference<String> lastHost = new AtomicReference<>();

    @BeforeAll
    static void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 16);
        server.createContext("/fixed", x -> {
            lastHost.set(x.getRequestHeaders().getFirst("Host"));
            byte[] body = "hello fixed".getBytes(StandardCharsets.UTF_8);
            x.sendResponseHeaders(200, body.length);
            try (OutputStream out = x.getResponseBody()) {
                out.write(body);
            }
        });
        server.createContext("/chunked", x -> {
            x.sendResponseHeaders(200, 0);
            try (OutputStream out = x.getResponseBody()) {
                for (int i = 0; i < 3; i++) {
                    out.write(("part" + i + ";").getBytes(StandardCharsets.UTF_8));
                    out.flush();
                }
            }
        });
        server.createContext("/redirect", x -> {
            x.getResponseHeaders()
                    .add("Location", x.getRequestURI().getRawQuery().substring("to=".length()));
            x.sendResponseHeaders(302, -1);
            x.close();
        });
        server.createContext("/relative", x -> {
            x.getResponseHeaders().add("Location", "/fixed");
            x.sendResponseHeaders(301, -1);
            x.close();
        });
        server.createContext("/loop", x -> {
            x.getResponseHeaders().add("Location", "/loop");
            x.sendResponseHeaders(307, -1);
            x.close();
        });
        server.createContext("/missing", x -> {
            x.sendResponseHeaders(404, -1);
            x.close();
        });
        server.createContext("/slow", x -> {
            try {
                Thread.sleep(3000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            x.sendResponseHeaders(200, -1);
            x.close();
        });
        server.start();
        base = "http://127.0.0.1:" + server.getAddress().getPort();
    }

    @AfterAll
    static void stop() {
        server.stop(0);
    }

    private static UrlFetcher fetcher(UrlPolicy policy) {
        return new UrlFetcher(policy, TIMEOUT, TIMEOUT, 5);
    }

    private static UrlFetcher fetcher(UrlPolicy policy, Map<String, List<String>> dns) {
        return new UrlFetcher(
                policy,
                TIMEOUT,
                TIMEOUT,
                5,
                host -> {
                    List<String> answers = dns.get(host);
                    if (answers == null) {
                        return InetAddress.getAllByName(host);
                    }
                    InetAddress[] out = new InetAddress[answers.size()];
                    for (int i = 0; i < out.length; i++) {
                        out[i] = InetAddress.getByName(answers.get(i));
                    }
                    return out;
                },
                () -> (SSLSocketFactory) SSLSocketFactory.getDefault());
    }

    private static final UrlFetcher LOOPBACK_ALLOWED = fetcher(UrlPolicy.of(false, List.of("127.0.0.1/32")));

    private static String read(Download download) throws IOException {
        try (download;
                InputStream in = download.body()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }

    private static void refused(ThrowingCallable call, String... fragments) {
        assertThatThrownBy(call).isInstanceOfSatisfying(RlmException.class, e -> {
            assertThat(e.code()).isEqualTo(ErrorCode.URL_REFUSED);
            assertThat(e.argument()).isEqualTo("url");
            assertThat(e.getMessage()).contains(fragments);
            assertThat(e.fix()).isNotBlank();
        });
    }

    @Test
    void aFixedLengthBodyIsRead() throws IOException {
        Download d = LOOPBACK_ALLOWED.open("url", base + "/fixed");
        assertThat(d.size()).isEqualTo(11);
        assertThat(read(d)).isEqualTo("hello fixed");
    }

    @Test
    void aChunkedBodyIsReadWithoutADeclaredSize() throws IOException {
        Download d = LOOPBACK_ALLOWED.open("url", base + "/chunked");
        assertThat(d.size()).isEqualTo(-1);
        assertThat(read(d)).isEqualTo("part0;part1;part2;");
    }

    @Test
    void aRelativeRedirectIsFollowed() throws IOException {
        Download d = LOOPBACK_ALLOWED.open("url", base + "/relative");
        assertThat(d.shown()).isEqualTo(base + "/fixed");
        assertThat(read(d)).isEqualTo("hello fixed");
    }

    @Test
    void loopbackIsRefusedByDefault() {
        UrlFetcher strict = fetcher(UrlPolicy.publicOnly());
        refused(() -> strict.open("url", base + "/fixed"), "127.0.0.1", "loopback");
        refused(() -> strict.open("url", "http://[::1]:" + server.getAddress().getPort() + "/fixed"), "loopback");
    }

    @Test
    void aHostNameThatResolvesToLoopbackIsRefused() {
        refused(
                () -> fetcher(UrlPolicy.publicOnly())
                        .open("url", "http://localhost:" + server.getAddress().getPort() + "/fixed"),
                "localhost resolves to",
                "loopback");
    }

    @Test
    void privateLinkLocalAndMetadataAddressesAreRefusedBeforeAnyConnection() {
        UrlFetcher strict = fetcher(UrlPolicy.publicOnly());
        refused(() -> strict.open("url", "http://169.254.169.254/latest/meta-data/"), "link-local", "metadata");
        refused(() -> strict.open("url", "http://10.0.0.1/"), "private");
        refused(() -> strict.open("url", "http://192.168.1.1/"), "private");
        refused(() -> strict.open("url", "http://[fe80::1]/"), "link-local");
        refused(() -> strict.open("url", "http://0.0.0.0/"), "unspecified");
    }

    @Test
    void anAddressRefusalTellsTheOperatorHowToAllowIt() {
        assertThatThrownBy(() -> fetcher(UrlPolicy.publicOnly()).open("url", "http://10.0.0.1/"))
                .isInstanceOfSatisfying(
                        RlmException.class,
                        e -> assertThat(e.fix()).contains("--allow-private-urls", "--url-allowlist"));
    }

    @Test
    void aRedirectIsCheckedAgain() {
        refused(
                () -> LOOPBACK_ALLOWED.open("url", base + "/redirect?to=http://169.254.169.254/latest/meta-data/"),
                "169.254.169.254",
                "redirect",
                "link-local");
        refused(() -> LOOPBACK_ALLOWED.open("url", base + "/redirect?to=http://[::1]:1/"), "redirect", "loopback");
        refused(() -> LOOPBACK_ALLOWED.open("url", base + "/redirect?to=http://10.9.8.7/"), "redirect", "private");
    }

    @Test
    void everyDnsAnswerIsChecked() {
        UrlFetcher f = fetcher(
                UrlPolicy.publicOnly(),
                Map.of(
                        "rebind.example", List.of("8.8.8.8", "127.0.0.1"),
                        "inside.example", List.of("169.254.169.254")));
        refused(() -> f.open("url", "http://rebind.example/"), "rebind.example resolves to 127.0.0.1", "loopback");
        refused(() -> f.open("url", "http://inside.example/"), "169.254.169.254", "link-local");
    }

    @Test
    void theConnectionGoesToTheCheckedAddressUnderTheAskedName() throws IOException {
        UrlFetcher f = fetcher(UrlPolicy.of(false, List.of("files.test")), Map.of("files.test", List.of("127.0.0.1")));
        int port = server.getAddress().getPort();
        assertThat(read(f.open("url", "http://files.test:" + port + "/fixed"))).isEqualTo("hello fixed");
        assertThat(lastHost.get()).isEqualTo("files.test:" + port);
    }

    @Test
    void onlyHttpAndHttpsAreFetched() {
        refused(() -> LOOPBACK_ALLOWED.open("url", "file:///etc/passwd"), "only http and https");
        refused(() -> LOOPBACK_ALLOWED.open("url", "ftp://example.com/x"), "only http and https");
        refused(() -> LOOPBACK_ALLOWED.open("url", "http://user:pw@127.0.0.1/"), "credentials");
    }

    @Test
    void errorsAndRedirectLoopsAreUpstreamErrors() {
        assertThatThrownBy(() -> LOOPBACK_ALLOWED.open("url", base + "/missing"))
                .isInstanceOfSatisfying(RlmException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.UPSTREAM_ERROR);
                    assertThat(e.getMessage()).contains("404");
                });
        assertThatThrownBy(() -> LOOPBACK_ALLOWED.open("url", base + "/loop"))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.getMessage()).contains("redirected more than 5"));
    }

    @Test
    void aSilentServerTimesOut() {
        UrlFetcher impatient = new UrlFetcher(UrlPolicy.of(true, List.of()), TIMEOUT, Duration.ofMillis(300), 5);
        assertThatThrownBy(() -> impatient.open("url", base + "/slow"))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.TIMEOUT));
    }

    @Test
    void anUnknownHostIsAnUpstreamError() {
        UrlFetcher f = new UrlFetcher(
                UrlPolicy.publicOnly(),
                TIMEOUT,
                TIMEOUT,
                5,
                host -> {
                    throw new UnknownHostException(host);
                },
                () -> (SSLSocketFactory) SSLSocketFactory.getDefault());
        assertThatThrownBy(() -> f.open("url", "http://nowhere.example/"))
                .isInstanceOfSatisfying(
                        RlmException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.UPSTREAM_ERROR));
    }
}
