package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.Test;

class JsonErrorHandlerTest {

    @Test
    void aServletThatThrowsIsAnsweredWithoutItsException() throws Exception {
        Server jetty = new Server();
        ServerConnector connector = new ServerConnector(jetty);
        connector.setHost("127.0.0.1");
        jetty.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.setErrorHandler(new JsonErrorHandler());
        context.addServlet(
                new ServletHolder(new HttpServlet() {
                    @Override
                    protected void doPost(HttpServletRequest request, HttpServletResponse response) {
                        throw new IllegalStateException("java.util.LinkedHashMap broke");
                    }
                }),
                "/boom");
        jetty.setHandler(context);
        jetty.start();
        try (HttpClient http = HttpClient.newHttpClient()) {
            for (String accept : new String[] {"application/json", "text/html", "*/*"}) {
                HttpResponse<String> response = http.send(
                        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/boom"))
                                .header("Accept", accept)
                                .POST(HttpRequest.BodyPublishers.ofString("{}"))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(response.statusCode()).isEqualTo(500);
                assertThat(response.body())
                        .contains("\"code\":-32603")
                        .doesNotContain("java.", "LinkedHashMap", "Exception", "IllegalState");
            }
        } finally {
            jetty.stop();
        }
    }
}
