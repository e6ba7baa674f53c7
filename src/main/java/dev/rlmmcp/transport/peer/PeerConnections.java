package dev.rlmmcp.transport.peer;

import dev.rlmmcp.cluster.Router;
import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpHeaders;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.function.BooleanSupplier;

/**
 * Blocking HTTP/1.1 keep-alive connections to peers, for a request whose body is in memory (nearly every
 * forwarded one). The request's own thread writes it in one piece and reads the answer: no hand-off between
 * threads, which on a busy machine costs more than the rest of the hop. While the owner has sent nothing, the
 * wait is checked every {@value PeerClients#CHECK_MS} ms against the cluster's view of the owner (see
 * {@link PeerClients}); a connection whose request failed or was given up is closed, and so are the idle ones to
 * that peer.
 */
public final class PeerConnections {

    private static final int CONNECT_MS = 1000;
    /** Well under the peer connector's idle timeout (at least 60 s), so the peer never closes one in use. */
    private static final long IDLE_NANOS = 30_000_000_000L;

    private final Map<String, Deque<Connection>> idle = new ConcurrentHashMap<>();

    /** A request to send: its target (path and query) and headers, Host and Content-Length aside. */
    public record Request(String method, String target, List<Map.Entry<String, String>> headers, byte[] body) {}

    /**
     * Sends {@code request} to {@code owner} and returns its answer once the status and headers came. Throws
     * {@link PeerProxy.Unreachable} when the owner cannot be connected, or stopped being the owner (in the
     * cluster's view) before it answered anything.
     */
    public PeerProxy.Answer send(Request request, Router.Remote owner, BooleanSupplier stillOwner) throws IOException {
        byte[] bytes = encode(request, owner.address());
        Connection reused = take(owner.address());
        if (reused != null) {
            try {
                return reused.exchange(bytes, request.method(), owner, stillOwner);
            } catch (Stale e) {
                reused.close(); // the peer closed it while idle, before reading this request: send it afresh
                dropIdle(owner.address()); // and the other idle ones, likely closed as well (a restarted peer)
            }
        }
        Connection fresh = connect(owner);
        try {
            return fresh.exchange(bytes, request.method(), owner, stillOwner);
        } catch (Stale e) {
            fresh.close();
            throw new IOException("node " + owner.nodeId() + " closed the connection without answering", e);
        }
    }

    private Connection take(String address) {
        Deque<Connection> pool = idle.get(address);
        for (Connection c = pool == null ? null : pool.pollFirst(); c != null; c = pool.pollFirst()) {
            if (System.nanoTime() - c.idleSince < IDLE_NANOS) {
                return c;
            }
            c.close();
        }
        return null;
    }

    private Connection connect(Router.Remote owner) throws IOException {
        URI uri = URI.create("http://" + owner.address());
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), CONNECT_MS);
            socket.setTcpNoDelay(true);
            socket.setKeepAlive(true);
        } catch (IOException e) {
            socket.close();
            dropIdle(owner.address());
            throw new PeerProxy.Unreachable(owner, e);
        }
        return new Connection(owner.address(), socket);
    }

    private void dropIdle(String address) {
        Deque<Connection> pool = idle.remove(address);
        if (pool != null) {
            pool.forEach(Connection::close);
        }
    }

    private static byte[] encode(Request request, String address) {
        StringBuilder head = new StringBuilder(512)
                .append(request.method())
                .append(' ')
                .append(request.target())
                .append(" HTTP/1.1\r\nHost: ")
                .append(address)
                .append("\r\n");
        for (Map.Entry<String, String> header : request.headers()) {
            head.append(header.getKey()).append(": ").append(header.getValue()).append("\r\n");
        }
        head.append("Content-Length: ").append(request.body().length).append("\r\n\r\n");
        byte[] start = head.toString().getBytes(StandardCharsets.ISO_8859_1);
        byte[] all = new byte[start.length + request.body().length];
        System.arraycopy(start, 0, all, 0, start.length);
        System.arraycopy(request.body(), 0, all, start.length, request.body().length);
        return all;
    }

    /** A reused connection gave no answer at all: the peer had closed it (its request was not read). */
    private static final class Stale extends IOException {
        Stale(IOException cause) {
            super(cause);
        }
    }

    /** One keep-alive connection; back in the pool once an answer's body was read to its end. */
    final class Connection {

        private final String address;
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        private long idleSince;
        private boolean used;

        Connection(String address, Socket socket) throws IOException {
            this.address = address;
            this.socket = socket;
            this.in = new BufferedInputStream(socket.getInputStream(), 8192);
            this.out = socket.getOutputStream();
        }

        PeerProxy.Answer exchange(byte[] request, String method, Router.Remote owner, BooleanSupplier stillOwner)
                throws IOException {
            boolean reused = used;
            used = true;
            try {
                try {
                    out.write(request);
                    out.flush();
                } catch (IOException e) {
                    if (reused) {
                        throw new Stale(e); // the peer closed it while it was idle
                    }
                    throw e;
                }
                awaitFirstByte(owner, stillOwner, reused);
                return answer(method);
            } catch (Stale | PeerProxy.Unreachable e) {
                throw e;
            } catch (IOException e) {
                close();
                dropIdle(address);
                throw e;
            }
        }

        /** Waits for the owner to answer while the cluster still names it the owner. */
        private void awaitFirstByte(Router.Remote owner, BooleanSupplier stillOwner, boolean reused)
                throws IOException {
            socket.setSoTimeout((int) PeerClients.CHECK_MS);
            try {
                while (true) {
                    try {
                        in.mark(1);
                        int first = in.read();
                        if (first < 0) {
                            throw new EOFException("the connection was closed");
                        }
                        in.reset();
                        return;
                    } catch (SocketTimeoutException e) {
                        if (!stillOwner.getAsBoolean()) {
                            close();
                            dropIdle(address);
                            throw new PeerProxy.Unreachable(
                                    owner, new IOException("no answer, and the cluster no longer names it the owner"));
                        }
                    }
                }
            } catch (IOException e) {
                if (reused && !(e instanceof PeerProxy.Unreachable)) {
                    throw new Stale(e);
                }
                throw e;
            } finally {
                if (!socket.isClosed()) {
                    socket.setSoTimeout(0); // a live owner's stream may be quiet for long
                }
            }
        }

        private PeerProxy.Answer answer(String method) throws IOException {
            int status;
            Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            do { // an interim 1xx answer is skipped
                headers.clear();
                String statusLine = line();
                String[] parts = statusLine.split(" ", 3);
                if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
                    throw new IOException("not an HTTP/1.1 answer: " + statusLine);
                }
                status = Integer.parseInt(parts[1]);
                for (String header = line(); !header.isEmpty(); header = line()) {
                    int colon = header.indexOf(':');
                    if (colon > 0) {
                        headers.computeIfAbsent(header.substring(0, colon).strip(), k -> new ArrayList<>(1))
                                .add(header.substring(colon + 1).strip());
                    }
                }
            } while (status >= 100 && status < 200);
            boolean keep = !headers.getOrDefault("Connection", List.of()).contains("close");
            return new PeerProxy.Answer(
                    status, HttpHeaders.of(headers, (n, v) -> true), body(method, status, headers, keep));
        }

        private InputStream body(String method, int status, Map<String, List<String>> headers, boolean keep) {
            if ("HEAD".equals(method) || status == 204 || status == 304) {
                return new BodyStream.Sized(in, 0, this, keep);
            }
            String encoding = String.join(",", headers.getOrDefault("Transfer-Encoding", List.of()));
            if (encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
                return new BodyStream.Chunked(in, this, keep);
            }
            List<String> length = headers.get("Content-Length");
            return length == null
                    ? new BodyStream.Sized(in, -1, this, false)
                    : new BodyStream.Sized(in, Long.parseLong(length.get(0)), this, keep);
        }

        private String line() throws IOException {
            StringBuilder line = new StringBuilder(64);
            for (int c = in.read(); c != '\n'; c = in.read()) {
                if (c < 0) {
                    throw new EOFException("the answer ended in its headers");
                }
                if (c != '\r') {
                    line.append((char) c);
                }
            }
            return line.toString();
        }

        /** The answer's body was read to its end: the connection serves the next request to this peer. */
        void finished(boolean keep) {
            if (!keep || socket.isClosed()) {
                close();
                return;
            }
            idleSince = System.nanoTime();
            idle.computeIfAbsent(address, a -> new ConcurrentLinkedDeque<>()).addFirst(this);
        }

        void close() {
            try {
                socket.close();
            } catch (IOException e) {
                // closed either way
            }
        }
    }
}
