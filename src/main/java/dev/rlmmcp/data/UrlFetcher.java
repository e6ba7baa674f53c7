package dev.rlmmcp.data;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.IDN;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import javax.net.ssl.SNIHostName;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * GETs http(s) URLs for the data tools, refusing addresses the {@link UrlPolicy} does not allow. The
 * host is resolved once, every answer is checked, and the socket connects to the checked address
 * itself (no second lookup for DNS rebinding to slip into); TLS still verifies the certificate against
 * the host name. Every redirect goes through the same checks. A small HTTP/1.1 client of our own does
 * this because the JDK's clients resolve names themselves and cannot be pinned to an address.
 */
public final class UrlFetcher {

    private static final int MAX_HEADER_BYTES = 64 * 1024;
    private static final Set<Integer> REDIRECTS = Set.of(301, 302, 303, 307, 308);

    private final UrlPolicy policy;
    private final Duration connectTimeout;
    private final Duration readTimeout;
    private final int maxRedirects;
    private final Resolver resolver;
    /** Supplied on first https use: loading the trust store costs start-up time for nothing otherwise. */
    private final Supplier<SSLSocketFactory> tls;

    public UrlFetcher(UrlPolicy policy, Duration connectTimeout, Duration readTimeout, int maxRedirects) {
        this(policy, connectTimeout, readTimeout, maxRedirects, InetAddress::getAllByName, UrlFetcher::defaultTls);
    }

    UrlFetcher(
            UrlPolicy policy,
            Duration connectTimeout,
            Duration readTimeout,
            int maxRedirects,
            Resolver resolver,
            Supplier<SSLSocketFactory> tls) {
        this.policy = policy;
        this.connectTimeout = connectTimeout;
        this.readTimeout = readTimeout;
        this.maxRedirects = maxRedirects;
        this.resolver = resolver;
        this.tls = tls;
    }

    /** Name resolution, replaceable in tests. */
    @FunctionalInterface
    interface Resolver {
        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    /** Opens the URL (argument {@code argument} of the tool) after following its redirects; the caller closes it. */
    public Download open(String argument, String url) {
        URI uri = parse(argument, url);
        for (int hop = 0; ; hop++) {
            Response response = get(argument, uri, url);
            if (!REDIRECTS.contains(response.status)) {
                if (response.status / 100 != 2) {
                    response.close();
                    throw new RlmException(
                            ErrorCode.UPSTREAM_ERROR,
                            "GET " + uri + " answered " + response.status + " " + response.reason,
                            argument,
                            "check the URL; it must answer 200 to a plain GET without credentials");
                }
                return new Download(
                        response.body(), response.length(), uri.toString(), response.headers.get("content-type"));
            }
            String location = response.headers.get("location");
            response.close();
            if (location == null) {
                throw new RlmException(
                        ErrorCode.UPSTREAM_ERROR,
                        "GET " + uri + " answered " + response.status + " without a Location",
                        argument,
                        "use the final URL of the resource");
            }
            if (hop >= maxRedirects) {
                throw new RlmException(
                        ErrorCode.UPSTREAM_ERROR,
                        url + " redirected more than " + maxRedirects + " times",
                        argument,
                        "use the final URL of the resource");
            }
            try {
                uri = parse(argument, uri.resolve(location.strip()).toString());
            } catch (IllegalArgumentException e) {
                throw new RlmException(
                        ErrorCode.UPSTREAM_ERROR,
                        "GET " + uri + " redirected to a bad URL: " + location,
                        argument,
                        "use the final URL of the resource");
            }
        }
    }

    private static URI parse(String argument, String url) {
        URI uri;
        try {
            uri = new URI(url.strip());
        } catch (URISyntaxException e) {
            throw RlmException.invalid(
                    argument,
                    "'" + url + "' is not a valid URL: " + e.getReason(),
                    "pass an absolute http:// or https:// URL");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https")) {
            throw new RlmException(
                    ErrorCode.URL_REFUSED,
                    "only http and https URLs are fetched, not '" + url + "'",
                    argument,
                    "pass an http:// or https:// URL");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            throw RlmException.invalid(argument, "'" + url + "' has no host", "pass an absolute URL with a host name");
        }
        if (uri.getRawUserInfo() != null) {
            throw new RlmException(
                    ErrorCode.URL_REFUSED,
                    "URLs with credentials (user@host) are not fetched",
                    argument,
                    "use a URL without user info, e.g. a pre-signed URL");
        }
        return uri;
    }

    private Response get(String argument, URI uri, String asked) {
        boolean https = uri.getScheme().equalsIgnoreCase("https");
        String host = bareHost(uri.getHost());
        int port = uri.getPort() >= 0 ? uri.getPort() : https ? 443 : 80;
        InetAddress address = checkedAddress(argument, host, uri, asked);
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(address, port), (int) connectTimeout.toMillis());
            socket.setSoTimeout((int) readTimeout.toMillis());
            if (https) {
                socket = secure(socket, host, port);
            }
            OutputStream out = socket.getOutputStream();
            out.write(request(uri, host, port, https).getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return Response.read(socket, uri);
        } catch (SocketTimeoutException e) {
            closeQuietly(socket);
            throw new RlmException(
                    ErrorCode.TIMEOUT,
                    "GET " + uri + " timed out (" + e.getMessage() + ")",
                    argument,
                    "try again later, or raise --url-timeout-s");
        } catch (IOException e) {
            closeQuietly(socket);
            throw new RlmException(
                    ErrorCode.UPSTREAM_ERROR,
                    "GET " + uri + " failed: " + e.getMessage(),
                    argument,
                    "check that the URL is reachable from the server");
        }
    }

    /** The one address to connect to: every address the name resolves to must pass the policy. */
    private InetAddress checkedAddress(String argument, String host, URI uri, String asked) {
        InetAddress[] answers;
        try {
            answers = resolver.resolve(host);
        } catch (UnknownHostException e) {
            throw new RlmException(
                    ErrorCode.UPSTREAM_ERROR, "cannot resolve the host of " + uri, argument, "check the host name");
        }
        for (InetAddress answer : answers) {
            String kind = policy.refusal(host, answer);
            if (kind != null) {
                String via = uri.toString().equals(asked) ? "" : " (reached by a redirect from " + asked + ")";
                throw new RlmException(
                        ErrorCode.URL_REFUSED,
                        "refused to fetch " + uri + via + ": " + host
                                + (host.equals(answer.getHostAddress())
                                        ? " is "
                                        : " resolves to " + answer.getHostAddress() + ", ")
                                + kind,
                        argument,
                        "only public addresses are fetched; the server's operator can allow others with "
                                + "--allow-private-urls or --url-allowlist (RLM_URL_ALLOW_PRIVATE, RLM_URL_ALLOWLIST)");
            }
        }
        return answers[0];
    }

    private static String bareHost(String host) {
        String h = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        return IDN.toASCII(h).toLowerCase(Locale.ROOT);
    }

    private Socket secure(Socket plain, String host, int port) throws IOException {
        SSLSocket socket = (SSLSocket) tls.get().createSocket(plain, host, port, true);
        SSLParameters parameters = socket.getSSLParameters();
        parameters.setEndpointIdentificationAlgorithm("HTTPS");
        if (!UrlPolicy.isLiteral(host)) {
            parameters.setServerNames(List.of(new SNIHostName(host)));
        }
        socket.setSSLParameters(parameters);
        socket.startHandshake();
        return socket;
    }

    private static String request(URI uri, String host, int port, boolean https) {
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        if (uri.getRawQuery() != null) {
            path += "?" + uri.getRawQuery();
        }
        String hostHeader =
                (host.contains(":") ? "[" + host + "]" : host) + (port == (https ? 443 : 80) ? "" : ":" + port);
        return "GET " + path + " HTTP/1.1\r\nHost: " + hostHeader + "\r\nUser-Agent: rlm-mcp\r\nAccept: */*\r\n"
                + "Accept-Encoding: identity\r\nConnection: close\r\n\r\n";
    }

    private static SSLSocketFactory defaultTls() {
        try {
            return SSLContext.getDefault().getSocketFactory();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing more to do with a socket that failed
        }
    }

    /** A response's status line and headers, and its body as framed by Content-Length or chunked encoding. */
    private record Response(
            Socket socket, BufferedInputStream in, int status, String reason, Map<String, String> headers)
            implements AutoCloseable {

        static Response read(Socket socket, URI uri) throws IOException {
            BufferedInputStream in = new BufferedInputStream(socket.getInputStream(), 1 << 16);
            int[] budget = {MAX_HEADER_BYTES};
            String statusLine = line(in, budget);
            String[] parts = statusLine.split(" ", 3);
            if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
                throw new IOException("not an HTTP/1.x response: " + statusLine);
            }
            int status;
            try {
                status = Integer.parseInt(parts[1]);
            } catch (NumberFormatException e) {
                throw new IOException("bad status line: " + statusLine);
            }
            Map<String, String> headers = new LinkedHashMap<>();
            for (String header = line(in, budget); !header.isEmpty(); header = line(in, budget)) {
                int colon = header.indexOf(':');
                if (colon > 0) {
                    headers.merge(
                            header.substring(0, colon).strip().toLowerCase(Locale.ROOT),
                            header.substring(colon + 1).strip(),
                            (a, b) -> a + ", " + b);
                }
            }
            if (status / 100 == 1) {
                throw new IOException("unexpected interim response " + status);
            }
            return new Response(socket, in, status, parts.length > 2 ? parts[2] : "", headers);
        }

        long length() {
            if (chunked()) {
                return -1;
            }
            try {
                String value = headers.get("content-length");
                return value == null ? -1 : Long.parseLong(value.strip());
            } catch (NumberFormatException e) {
                return -1;
            }
        }

        boolean chunked() {
            return headers.getOrDefault("transfer-encoding", "")
                    .toLowerCase(Locale.ROOT)
                    .contains("chunked");
        }

        InputStream body() {
            InputStream framed =
                    chunked() ? new ChunkedInputStream(in) : length() >= 0 ? new BoundedInputStream(in, length()) : in;
            return new java.io.FilterInputStream(framed) {
                @Override
                public void close() throws IOException {
                    socket.close();
                }
            };
        }

        @Override
        public void close() {
            closeQuietly(socket);
        }

        static String line(InputStream in, int[] budget) throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream(80);
            while (true) {
                int b = in.read();
                if (b < 0) {
                    throw new IOException("connection closed in the response head");
                }
                if (--budget[0] < 0) {
                    throw new IOException("response head larger than " + MAX_HEADER_BYTES + " bytes");
                }
                if (b == '\n') {
                    String text = line.toString(StandardCharsets.ISO_8859_1);
                    return text.endsWith("\r") ? text.substring(0, text.length() - 1) : text;
                }
                line.write(b);
            }
        }
    }

    /** Exactly {@code length} bytes of the underlying stream; fewer is an error, not a silent truncation. */
    static final class BoundedInputStream extends java.io.FilterInputStream {

        private long left;

        BoundedInputStream(InputStream in, long length) {
            super(in);
            this.left = length;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left == 0) {
                return -1;
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n < 0) {
                throw new IOException("connection closed with " + left + " bytes of the body still to come");
            }
            left -= n;
            return n;
        }
    }

    /** The body of a response sent with Transfer-Encoding: chunked. */
    static final class ChunkedInputStream extends java.io.FilterInputStream {

        private long left;
        private boolean done;

        ChunkedInputStream(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (done) {
                return -1;
            }
            if (left == 0) {
                int[] budget = {MAX_HEADER_BYTES};
                String size = Response.line(in, budget);
                int semicolon = size.indexOf(';');
                try {
                    left = Long.parseLong((semicolon >= 0 ? size.substring(0, semicolon) : size).strip(), 16);
                } catch (NumberFormatException e) {
                    throw new IOException("bad chunk size '" + size + "'");
                }
                if (left == 0) {
                    while (!Response.line(in, budget).isEmpty()) {
                        // trailers: ignored
                    }
                    done = true;
                    return -1;
                }
            }
            int n = in.read(b, off, (int) Math.min(len, left));
            if (n < 0) {
                throw new IOException("connection closed inside a chunk");
            }
            left -= n;
            if (left == 0) {
                int[] budget = {2};
                if (!Response.line(in, budget).isEmpty()) {
                    throw new IOException("chunk not followed by CRLF");
                }
            }
            return n;
        }
    }
}
