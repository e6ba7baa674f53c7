package dev.rlmmcp.transport.http.ui;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.TestReplies;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.process.ProcessLauncher;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The viewer's HTTP surface on a real Jetty: who gets in, what headers guard the page, what the JSON holds. */
class UiServletTest {

    private static final String KEY = "ui-test-key-5f2c";
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private Sessions sessions;
    private Server jetty;
    private String base;
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void start() throws Exception {
        sessions = new Sessions(new KernelFactory(TestSettings.in(dir), new ProcessLauncher(), JSON));
        jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        jetty.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.addServlet(new ServletHolder(new UiServlet(sessions, JSON, UiAuth.of(KEY))), "/ui/*");
        jetty.setHandler(context);
        jetty.start();
        base = "http://127.0.0.1:" + connector.getLocalPort();
    }

    @AfterEach
    void stop() throws Exception {
        jetty.stop();
        sessions.close();
    }

    private HttpResponse<String> get(String path, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> login(String key, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/ui/login"))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString("key=" + key));
        if (headers.length > 0) {
            request.headers(headers);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String bearer() {
        return "Bearer " + KEY;
    }

    @Test
    void withoutTheKeyThePageSendsToTheLoginFormAndTheJsonIsRefused() throws Exception {
        HttpResponse<String> page = get("/ui/");
        assertThat(page.statusCode()).isEqualTo(303);
        assertThat(page.headers().firstValue("Location")).hasValue("/ui/login");
        HttpResponse<String> api = get("/ui/api/sessions");
        assertThat(api.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(api.body()).path("error").path("fix").asText()).contains("/ui/login");
        assertThat(get("/ui/api/sessions", "Authorization", "Bearer wrong").statusCode())
                .isEqualTo(401);
        assertThat(get("/ui/api/sessions", "Cookie", UiAuth.COOKIE + "=" + KEY).statusCode())
                .isEqualTo(401);
        assertThat(get("/ui/login").body()).contains("<form method=\"post\" action=\"/ui/login\"");
    }

    @Test
    void theBearerKeyOrTheLoginCookieLetsIn() throws Exception {
        assertThat(get("/ui/api/sessions", "Authorization", bearer()).statusCode())
                .isEqualTo(200);
        HttpResponse<String> wrong = login("nope");
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(wrong.body()).contains("<p class=\"error\">");
        assertThat(wrong.headers().firstValue("Set-Cookie")).isEmpty();
        HttpResponse<String> right = login(KEY);
        assertThat(right.statusCode()).isEqualTo(303);
        String cookie = right.headers().firstValue("Set-Cookie").orElseThrow();
        assertThat(cookie).contains("HttpOnly", "SameSite=Strict", "Path=/ui").doesNotContain(KEY);
        String pair = cookie.substring(0, cookie.indexOf(';'));
        HttpResponse<String> page = get("/ui/", "Cookie", pair);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body())
                .contains("<script src=\"/ui/assets/app.js\"")
                .contains("class=\"logout\"><button type=\"submit\">Log out</button>");
        assertThat(get("/ui/api/sessions", "Cookie", pair).statusCode()).isEqualTo(200);
        assertThat(login(KEY, "Origin", "http://evil.example").statusCode()).isEqualTo(403);
    }

    @Test
    void repeatedFailedLoginsAreRefusedForAWhile() throws Exception {
        for (int i = 0; i < 5; i++) {
            assertThat(login("guess-" + i).statusCode()).isEqualTo(401);
        }
        HttpResponse<String> refused = login(KEY);
        assertThat(refused.statusCode()).isEqualTo(429);
        assertThat(refused.headers().firstValue("Retry-After")).isPresent();
        assertThat(refused.headers().firstValue("Set-Cookie")).isEmpty();
        assertThat(get("/ui/api/sessions", "Authorization", bearer()).statusCode())
                .isEqualTo(200);
    }

    @Test
    void everyAnswerCarriesAStrictContentSecurityPolicy() throws Exception {
        for (String path : new String[] {"/ui/", "/ui/login", "/ui/assets/app.js", "/ui/api/sessions"}) {
            HttpResponse<String> response = get(path, "Authorization", bearer());
            assertThat(response.headers().firstValue("Content-Security-Policy").orElseThrow())
                    .as(path)
                    .contains("default-src 'none'", "script-src 'self'")
                    .doesNotContain("unsafe");
            assertThat(response.headers().firstValue("X-Content-Type-Options"))
                    .as(path)
                    .hasValue("nosniff");
        }
        assertThat(get("/ui/assets/app.js").headers().firstValue("Content-Type").orElseThrow())
                .startsWith("text/javascript");
        assertThat(get("/ui/assets/nothing.js").statusCode()).isEqualTo(404);
        assertThat(get("/ui/assets/../index.html").statusCode()).isNotEqualTo(200);
    }

    @Test
    void sessionsTheirTraceAndItsJsonLinesWithoutChangingTheSession() throws Exception {
        Session session = sessions.create("orders", Limits.NONE);
        session.execute(StepRequest.of("x = 1\nprint('<script>alert(1)</script>')", Duration.ofSeconds(30)));
        session.execute(StepRequest.of("y = x + 1", Duration.ofSeconds(30)));
        Instant idleSince = session.lastActive();

        JsonNode list =
                JSON.readTree(get("/ui/api/sessions", "Authorization", bearer()).body());
        assertThat(list.path("sessions")).anySatisfy(s -> {
            assertThat(s.path("session_id").asText()).isEqualTo(session.id());
            assertThat(s.path("name").asText()).isEqualTo("orders");
            assertThat(s.path("steps").asInt()).isEqualTo(2);
            assertThat(s.path("busy").asBoolean()).isFalse();
        });
        JsonNode one = JSON.readTree(get("/ui/api/sessions/" + session.id(), "Authorization", bearer())
                .body());
        assertThat(one.path("steps")).hasSize(2);
        assertThat(one.path("steps").path(0).path("output").asText()).isEqualTo("<script>alert(1)</script>\n");
        JsonNode later = JSON.readTree(get("/ui/api/sessions/" + session.id() + "?from=1", "Authorization", bearer())
                .body());
        assertThat(later.path("steps")).hasSize(1);
        assertThat(later.path("steps").path(0).path("index").asInt()).isEqualTo(1);
        JsonNode recent = JSON.readTree(get("/ui/api/sessions/" + session.id() + "?last=1", "Authorization", bearer())
                .body());
        assertThat(recent.path("steps"))
                .extracting(s -> s.path("index").asInt())
                .containsExactly(1);
        assertThat(recent.path("trace_length").asInt()).isEqualTo(2);
        JsonNode vars = JSON.readTree(get("/ui/api/sessions/" + session.id() + "/variables", "Authorization", bearer())
                .body());
        assertThat(vars.path("variables"))
                .extracting(v -> v.path("name").asText())
                .contains("x", "y");

        HttpResponse<String> jsonl =
                get("/ui/api/sessions/" + session.id() + "/trace.jsonl", "Authorization", bearer());
        assertThat(jsonl.headers().firstValue("Content-Disposition").orElseThrow())
                .contains("attachment");
        String[] lines = jsonl.body().split("\n");
        assertThat(lines).hasSize(3);
        assertThat(JSON.readTree(lines[0]).path("type").asText()).isEqualTo("session");
        assertThat(JSON.readTree(lines[2]).path("input").asText()).isEqualTo("y = x + 1");
        assertThat(JSON.readTree(lines[2]).has("memory_bytes")).isTrue();

        assertThat(session.lastActive()).isEqualTo(idleSince);
        assertThat(TestReplies.summary(session.summary()).path("steps").asInt()).isEqualTo(2);
        assertThat(get("/ui/api/sessions/s-nothing", "Authorization", bearer()).statusCode())
                .isEqualTo(404);
        assertThat(get("/ui/api/sessions/" + session.id() + "?from=x", "Authorization", bearer())
                        .statusCode())
                .isEqualTo(400);
        assertThat(get("/ui/api/sessions/" + session.id() + "?last=-1", "Authorization", bearer())
                        .statusCode())
                .isEqualTo(400);
        HttpResponse<String> noRun =
                get("/ui/api/sessions/" + session.id() + "/rlm/0.jsonl", "Authorization", bearer());
        assertThat(noRun.statusCode()).isEqualTo(404);
        assertThat(noRun.body()).contains("trace entry 0 of session " + session.id() + " holds no RLM run");
        assertThat(get("/ui/api/sessions/" + session.id() + "/rlm/99.jsonl", "Authorization", bearer())
                        .statusCode())
                .isEqualTo(404);
        assertThat(get("/ui/api/sessions/" + session.id() + "/rlm/0.jsonl").statusCode())
                .as("the key is needed")
                .isEqualTo(401);
    }
}
