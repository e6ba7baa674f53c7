package dev.rlmmcp.face;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.core.Sessions;
import io.modelcontextprotocol.server.McpSyncServer;
import java.net.InetSocketAddress;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/** HTTP on embedded Jetty: Streamable HTTP MCP at /mcp and GET /health, on one port. */
public final class HttpFace implements AutoCloseable {

    private final Server jetty;
    private final McpSyncServer mcp;
    private final StreamableHttpTransport transport;

    public HttpFace(McpServers servers, Sessions sessions, ObjectMapper json, String host, int port, int maxRequestBytes) {
        QueuedThreadPool threads = new QueuedThreadPool(256, 8);
        threads.setName("http");
        jetty = new Server(threads);
        HttpConfiguration config = new HttpConfiguration();
        config.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(jetty, new HttpConnectionFactory(config));
        connector.setHost(host);
        connector.setPort(port);
        jetty.addConnector(connector);

        transport = new StreamableHttpTransport(servers.mapper(), maxRequestBytes, sessions::connectionClosed);
        mcp = servers.serve(transport);

        ServletContextHandler context = new ServletContextHandler();
        context.setContextPath("/");
        context.addServlet(new ServletHolder("mcp", transport), "/mcp");
        context.addServlet(new ServletHolder("health", new HealthServlet(sessions, json)), "/health");
        dev.rlmmcp.face.ui.UiServlet.mount(context, sessions, json);
        jetty.setHandler(context);
        jetty.setStopTimeout(5_000);
    }

    public void start() throws Exception {
        jetty.start();
    }

    public InetSocketAddress address() {
        ServerConnector connector = (ServerConnector) jetty.getConnectors()[0];
        return new InetSocketAddress(connector.getHost(), connector.getLocalPort());
    }

    public void join() throws InterruptedException {
        jetty.join();
    }

    /** Stops taking requests, lets running ones finish (bounded by Jetty's stop timeout), ends the MCP sessions. */
    @Override
    public void close() {
        mcp.closeGracefully();
        try {
            jetty.stop();
        } catch (Exception e) {
            throw new IllegalStateException("stopping the HTTP server failed", e);
        }
    }
}
