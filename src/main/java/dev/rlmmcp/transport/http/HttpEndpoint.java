package dev.rlmmcp.transport.http;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.ToolForward;
import dev.rlmmcp.transport.http.ui.UiServlet;
import dev.rlmmcp.transport.peer.PeerCall;
import dev.rlmmcp.transport.peer.PeerClients;
import dev.rlmmcp.transport.peer.PeerConnections;
import dev.rlmmcp.transport.peer.PeerProxy;
import dev.rlmmcp.transport.peer.Reroute;
import io.modelcontextprotocol.server.McpSyncServer;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.ee11.servlet.FilterHolder;
import org.eclipse.jetty.ee11.servlet.ServletContextHandler;
import org.eclipse.jetty.ee11.servlet.ServletHolder;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.GracefulHandler;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Every HTTP endpoint on one port of embedded Jetty: Streamable HTTP MCP at /mcp, legacy HTTP+SSE
 * at /sse and /message, the plain /rpc and /healthz, and /health. Each MCP transport has its
 * own SDK server built from the same tools, and /rpc calls the same catalog, so every endpoint ends
 * in the same handlers. In front of all of them: the access log, Host/Origin validation, CORS and
 * (with an API key) authentication.
 */
public final class HttpEndpoint implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(HttpEndpoint.class);

    /**
     * A closing cluster node keeps its ports open (every request answered with the JSON 503, see {@link
     * ClosingHandler}) until no new connection has come for this long, then closes them (see {@link
     * PortCloser}): a port closed while connections are still on their way resets them after nginx sent a POST.
     */
    static final long DRAIN_QUIET_MS = 500;

    /** The longest a closing cluster node waits for that quiet before its ports close anyway. */
    static final long DRAIN_MAX_MS = 5_000;

    private final Server jetty;
    private final ServletContextHandler context;
    private final LegacySseTransport sse;
    private final StreamableHttpTransport streamable;
    private final List<McpSyncServer> mcp;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final ClosingHandler closing;
    private final PeerChannel cluster;
    private final PortCloser ports = new PortCloser();
    private long drainQuietMs = DRAIN_QUIET_MS;
    private long drainMaxMs = DRAIN_MAX_MS;

    /** Today's single-node endpoint: one public connector, no routing. */
    public HttpEndpoint(McpServers servers, Sessions sessions, ObjectMapper json, HttpSettings settings) {
        this(servers, sessions, json, settings, null);
    }

    /**
     * The endpoint, with {@code cluster} (null on a single node) a second connector for peers and the routing
     * of each request to the node that owns its session.
     */
    public HttpEndpoint(
            McpServers servers, Sessions sessions, ObjectMapper json, HttpSettings settings, PeerChannel cluster) {
        this.cluster = cluster;
        QueuedThreadPool threads = new QueuedThreadPool(512, 8);
        threads.setName("http");
        jetty = new Server(threads);
        connect(settings, cluster);
        jetty.setRequestLog(new AccessLog(System.err));

        McpSessionAdoption homes = cluster == null ? null : new McpSessionAdoption(cluster.homes(), servers.mapper());
        streamable = new StreamableHttpTransport(
                servers.mapper(),
                settings.maxRequestBytes(),
                settings.sessionIdle(),
                sessions::connectionClosed,
                servers.statelessTools(),
                servers.toolOffer(),
                homes);
        sse = new LegacySseTransport(
                servers.mapper(),
                settings.maxRequestBytes(),
                settings.sseKeepAlive(),
                sessions::connectionClosed,
                servers.toolOffer(),
                homes);
        ToolForward forward =
                cluster == null ? ToolForward.NONE : new PeerCall(cluster.router(), cluster.auth(), servers.mapper());
        mcp = List.of(servers.serve(streamable, forward), servers.serve(sse, forward));

        context = new ServletContextHandler();
        context.setContextPath("/");
        context.setErrorHandler(new JsonErrorHandler());
        filters(settings, json, cluster);
        addServlet("mcp", streamable, "/mcp");
        addServlet("sse", sse, LegacySseTransport.SSE_PATH, LegacySseTransport.MESSAGE_PATH);
        addServlet("rpc", new PlainRpcServlet(servers.catalog(), json, settings.maxRequestBytes()), "/rpc");
        addServlet("healthz", new HealthzServlet(), "/healthz");
        addServlet("health", new HealthServlet(sessions, json), "/health");
        addServlet("ui", UiServlet.of(sessions, json), "/ui/*");

        GracefulHandler graceful = new GracefulHandler();
        graceful.setHandler(context);
        closing = new ClosingHandler(graceful);
        jetty.setHandler(closing);
        jetty.setStopTimeout(settings.stopTimeout().toMillis());
    }

    /** The public connector, and in a cluster the peer connector on the node address. */
    private void connect(HttpSettings settings, PeerChannel cluster) {
        HttpConfiguration config = new HttpConfiguration();
        config.setSendServerVersion(false);
        // longer than the longest SSE keep-alive interval, so an idle /sse stream is never cut by Jetty
        long idle = Math.max(60_000, 2 * settings.sseKeepAlive().toMillis());
        jetty.addConnector(connector(config, settings.host(), settings.port(), idle, "public"));
        if (cluster != null) {
            jetty.addConnector(connector(config, cluster.host(), cluster.port(), idle, PeerGate.PEER_CONNECTOR));
        }
    }

    private ServerConnector connector(HttpConfiguration config, String host, int port, long idle, String name) {
        // in a cluster, no acceptor thread: the selector accepts, so that a closing node can take the last queued
        // connections itself without blocking (see PortCloser)
        ServerConnector connector =
                new ServerConnector(jetty, cluster != null ? 0 : -1, -1, new HttpConnectionFactory(config));
        connector.setHost(host);
        connector.setPort(port);
        connector.setIdleTimeout(idle);
        connector.setName(name);
        connector.addEventListener(ports);
        return connector;
    }

    /**
     * The filters every request passes, in order. In a cluster a peer's request passes the peer gate instead of
     * the client checks, and requests on /mcp and /rpc are routed to their session's node.
     */
    private void filters(HttpSettings settings, ObjectMapper json, PeerChannel cluster) {
        filter(new HeapReturnFilter());
        if (cluster != null) {
            filter(new PeerGate(cluster.auth()));
        }
        filter(forClients(new OriginHostFilter(hostPolicy(settings)), cluster));
        filter(forClients(new CorsFilter(settings.corsOrigins()), cluster));
        if (settings.apiKey() != null) {
            filter(forClients(new AuthFilter(settings.apiKey()), cluster));
        }
        if (cluster != null) {
            FilterHolder routing = new FilterHolder(new RoutingFilter(
                    cluster.router(),
                    new PeerProxy(cluster.auth(), new PeerClients(), new PeerConnections()),
                    json,
                    settings.maxRequestBytes(),
                    cluster.auth()::tagged,
                    Reroute.PATIENCE));
            routing.setAsyncSupported(true);
            context.addFilter(routing, "/mcp", EnumSet.of(DispatcherType.REQUEST));
            context.addFilter(routing, "/rpc", EnumSet.of(DispatcherType.REQUEST));
            context.addFilter(routing, LegacySseTransport.MESSAGE_PATH, EnumSet.of(DispatcherType.REQUEST));
        }
    }

    private static Filter forClients(Filter check, PeerChannel cluster) {
        return cluster == null ? check : new PublicOnly(check);
    }

    /** Adds a servlet at these path specs (before {@link #start}); it sits behind the same filters. */
    public void addServlet(String name, HttpServlet servlet, String... pathSpecs) {
        ServletHolder holder = new ServletHolder(name, servlet);
        holder.setAsyncSupported(true);
        for (String spec : pathSpecs) {
            context.addServlet(holder, spec);
        }
    }

    private void filter(Filter filter) {
        FilterHolder holder = new FilterHolder(filter);
        holder.setAsyncSupported(true);
        context.addFilter(holder, "/*", EnumSet.of(DispatcherType.REQUEST));
    }

    /** Loopback names always; a specific bound address too; any name on a wildcard bind without a host list. */
    static OriginHostFilter.HostPolicy hostPolicy(HttpSettings settings) {
        Set<String> hosts = new HashSet<>(settings.allowedHosts());
        boolean wildcard = isWildcard(settings.host());
        if (!wildcard) {
            hosts.add(
                    settings.host().contains(":") && !settings.host().startsWith("[")
                            ? "[" + settings.host() + "]"
                            : settings.host());
        }
        boolean anyHost =
                !isLoopback(settings.host()) && settings.allowedHosts().isEmpty();
        return new OriginHostFilter.HostPolicy(hosts, settings.corsOrigins(), anyHost);
    }

    public static boolean isLoopback(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    private static boolean isWildcard(String host) {
        try {
            return InetAddress.getByName(host).isAnyLocalAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    public void start() throws Exception {
        jetty.start();
        if (cluster != null) {
            // the ids of tasks and input_required rounds name this node, so that any node routes them here
            String host = cluster.host().contains(":") && !cluster.host().startsWith("[")
                    ? "[" + cluster.host() + "]"
                    : cluster.host();
            streamable.tagIds(cluster.auth().tag(host + ":" + peerAddress().getPort()));
        }
    }

    public InetSocketAddress address() {
        ServerConnector connector = (ServerConnector) jetty.getConnectors()[0];
        return new InetSocketAddress(connector.getHost(), connector.getLocalPort());
    }

    /** Where peers reach this node, once started; null on a single node. */
    public InetSocketAddress peerAddress() {
        if (jetty.getConnectors().length < 2) {
            return null;
        }
        ServerConnector connector = (ServerConnector) jetty.getConnectors()[1];
        return new InetSocketAddress(connector.getHost(), connector.getLocalPort());
    }

    public void join() throws InterruptedException {
        jetty.join();
    }

    /**
     * Graceful stop: SSE streams end, (in a cluster) the ports drain and close, requests under way finish (bounded by
     * the stop timeout, later ones get the product's JSON 503, see {@link ClosingHandler}), then the MCP
     * sessions end.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        closing.closing();
        // the long-lived streams end first, or Jetty's graceful stop waits its whole timeout for them
        sse.closeGracefully().block();
        streamable.endStreams();
        if (cluster != null) {
            ports.close(jetty.getConnectors(), drainQuietMs, drainMaxMs);
        }
        try {
            jetty.stop();
        } catch (Exception e) {
            log.warn("stopping the HTTP server: {}", e.toString());
        }
        mcp.forEach(McpSyncServer::closeGracefully);
    }

    /** Shorter drains for tests. */
    void drainFor(long quietMs, long maxMs) {
        drainQuietMs = quietMs;
        drainMaxMs = maxMs;
    }

    /** The request's path inside the server, decoded and normalised, without the query. */
    static String path(HttpServletRequest request) {
        String servletPath = request.getServletPath();
        String info = request.getPathInfo();
        return (servletPath == null ? "" : servletPath) + (info == null ? "" : info);
    }
}
