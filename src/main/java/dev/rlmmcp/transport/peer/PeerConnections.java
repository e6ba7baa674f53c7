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
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
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
 * threads, which on a busy machine costs more than the rest of the hop.
 *
 * <p>A request is delivered at most once. It is sent again (by the caller, to whichever node owns the session
 * then) only when the owner cannot have received it: the connection was refused or timed out, or writing it
 * failed because the peer had already reset the connection. A pooled connection is checked before it is used,
 * so one the peer closed while idle (a node that stopped) is never written to. Once the request is written, the
 * answer is waited for on that connection, whoever the cluster names the owner meanwhile: a node restarted at
 * the same address is a new node id, and it may be the very process that is running the request. Only when
 * the cluster names no node at that address any more (the session moved elsewhere, the old owner's lease ran
 * out) for {@link Reroute#PATIENCE} does the wait end, in {@link PeerProxy.Unanswered}: the caller answers
 * that the call may have run, and never sends it again.
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
     * {@link PeerProxy.Unreachable} when the owner cannot have received it, {@link PeerProxy.Unanswered} when it
     * may have and gave no answer (see above).
     */
    public PeerProxy.Answer send(Request request, Router.Remote owner, BooleanSupplier stillOwner) throws IOException {
        byte[] bytes = encode(request, owner.address());
        Connection reused = take(owner.address());
        if (reused != null) {
            try {
                return reused.exchange(bytes, request.method(), owner, stillOwner);
            } catch (Stale e) {
                reused.close(); // the peer had reset it, so it read nothing of this request: send it afresh
                dropIdle(owner.address()); // and the other idle ones, likely closed as well (a restarted peer)
            }
        }
        Connection fresh = connect(owner);
        try {
            return fresh.exchange(bytes, request.method(), owner, stillOwner);
        } catch (Stale e) {
            fresh.close();
            throw new PeerProxy.Unreachable(owner, e); // reset before a byte of the request could be read
        }
    }

    /** An idle connection to {@code address} the peer has not closed, or null. */
    private Connection take(String address) {
        Deque<Connection> pool = idle.get(address);
        for (Connection c = pool == null ? null : pool.pollFirst(); c != null; c = pool.pollFirst()) {
            if (System.nanoTime() - c.idleSince < IDLE_NANOS && c.open()) {
                return c;
            }
            c.close();
        }
        return null;
    }

    private Connection connect(Router.Remote owner) throws IOException {
        URI uri = URI.create("http://" + owner.address());
        SocketChannel channel = SocketChannel.open();
        try {
            channel.socket().connect(new InetSocketAddress(uri.getHost(), uri.getPort()), CONNECT_MS);
            channel.socket().setTcpNoDelay(true);
            channel.socket().setKeepAlive(true);
        } catch (IOException e) {
            channel.close();
            dropIdle(owner.address());
            throw new PeerProxy.Unreachable(owner, e);
        }
        return new Connection(owner.address(), channel);
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

    /** Writing the request failed: the peer had reset the connection, so it read none of it. */
    private static final class Stale extends IOException {
        Stale(IOException cause) {
            super(cause);
        }
    }

    /** One keep-alive connection; back in the pool once an answer's body was read to its end. */
    final class Connection {

        private final String address;
        private final SocketChannel channel;
        private final Socket socket;
        private final InputStream in;
        private final OutputStream out;
        private long idleSince;

        Connection(String address, SocketChannel channel) throws IOException {
            this.address = address;
            this.channel = channel;
            this.socket = channel.socket();
            this.in = new BufferedInputStream(socket.getInputStream(), 8192);
            this.out = socket.getOutputStream();
        }

        /** Whether the peer has neither closed this idle connection nor sent anything on it (it owes nothing). */
        boolean open() {
            try {
                if (in.available() > 0) {
                    return false;
                }
                channel.configureBlocking(false);
                try {
                    return channel.read(ByteBuffer.allocate(1)) == 0;
                } finally {
                    channel.configureBlocking(true);
                }
            } catch (IOException e) {
                return false;
            }
        }

        PeerProxy.Answer exchange(byte[] request, String method, Router.Remote owner, BooleanSupplier stillOwner)
                throws IOException {
            try {
                out.write(request);
                out.flush();
            } catch (IOException e) {
                close();
                throw new Stale(e);
            }
            try {
                awaitFirstByte(owner, stillOwner);
                return answer(method);
            } catch (PeerProxy.Unanswered e) {
                close();
                dropIdle(address);
                throw e;
            } catch (IOException e) {
                close();
                dropIdle(address);
                throw new PeerProxy.Unanswered(owner, e.toString());
            }
        }

        /**
         * Waits for the owner to answer while the cluster names a node at its address (or cannot tell), and for
         * {@link Reroute#PATIENCE} after it stopped naming one.
         */
        private void awaitFirstByte(Router.Remote owner, BooleanSupplier stillOwner) throws IOException {
            socket.setSoTimeout((int) PeerClients.CHECK_MS);
            long givenUpAt = 0;
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
                        givenUpAt = PeerClients.giveUpAt(givenUpAt, stillOwner);
                        if (givenUpAt != 0 && System.nanoTime() - givenUpAt > 0) {
                            throw new PeerProxy.Unanswered(owner, "no answer, and the cluster names another owner");
                        }
                    }
                }
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
                channel.close();
            } catch (IOException e) {
                // closed either way
            }
        }
    }
}
