package dev.rlmmcp.cluster;

import java.nio.charset.StandardCharsets;
import java.security.InvalidKeyException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The authentication of node-to-node requests: {@code Rlm-Peer: <nodeId>.<unixMs>.<hex HMAC-SHA256(secret,
 * "nodeId.unixMs.METHOD target")>}, where target is the request's path with its query. A header is good for
 * 30 s either side of the receiver's clock, so a captured one can only be replayed, on the same method and
 * target, within that window; the peer channel is meant for a private network. The secret is never logged.
 */
public final class PeerAuth {

    public static final String HEADER = "Rlm-Peer";
    static final Duration WINDOW = Duration.ofSeconds(30);
    private static final String HMAC = "HmacSHA256";
    private static final String TAG = "~";

    private final SecretKeySpec key;
    private final String nodeId;
    private final Clock clock;

    /** Signs as {@code nodeId} with {@code secret} (its UTF-8 bytes; at least 16 of them). */
    public PeerAuth(String secret, String nodeId, Clock clock) {
        if (secret == null || secret.getBytes(StandardCharsets.UTF_8).length < 16) {
            throw new IllegalArgumentException(
                    "the cluster secret (RLM_CLUSTER_SECRET or --cluster-secret-file) must be at least 16 bytes");
        }
        if (nodeId.isEmpty() || nodeId.contains(".") || nodeId.contains(" ") || nodeId.contains(TAG)) {
            throw new IllegalArgumentException("a node id must be non-empty, without dots, spaces or ~: " + nodeId);
        }
        this.key = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), HMAC);
        this.nodeId = nodeId;
        this.clock = clock;
    }

    public PeerAuth(String secret, String nodeId) {
        this(secret, nodeId, Clock.systemUTC());
    }

    public String nodeId() {
        return nodeId;
    }

    /** The header value for a request of {@code method} to {@code target} (path and query), signed now. */
    public String sign(String method, String target) {
        String signed = nodeId + "." + clock.millis();
        return signed + "." + HexFormat.of().formatHex(mac(signed, method, target));
    }

    /**
     * The node id of the peer that signed {@code header} for this method and target, if the signature is
     * this secret's and its time within the window; empty otherwise (absent, malformed, stale, forged).
     */
    public Optional<String> verify(String header, String method, String target) {
        if (header == null) {
            return Optional.empty();
        }
        int last = header.lastIndexOf('.');
        int middle = last < 0 ? -1 : header.lastIndexOf('.', last - 1);
        if (middle <= 0) {
            return Optional.empty();
        }
        String peer = header.substring(0, middle);
        long sentAt;
        byte[] sent;
        try {
            sentAt = Long.parseLong(header.substring(middle + 1, last));
            sent = HexFormat.of().parseHex(header.substring(last + 1));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
        if (Math.abs(clock.millis() - sentAt) > WINDOW.toMillis()) {
            return Optional.empty();
        }
        byte[] expected = mac(header.substring(0, last), method, target);
        return MessageDigest.isEqual(expected, sent) ? Optional.of(peer) : Optional.empty();
    }

    private byte[] mac(String signed, String method, String target) {
        return mac(signed + "." + method + " " + target);
    }

    private byte[] mac(String message) {
        try {
            Mac mac = Mac.getInstance(HMAC);
            mac.init(key);
            return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException | InvalidKeyException e) {
            throw new IllegalStateException("HMAC-SHA256 is unavailable", e);
        }
    }

    /**
     * A prefix naming this node and its peer {@code address}, sealed with the secret, for the ids this node
     * hands out (task ids, request states): {@code nodeId~address~mac~}. Any node can read it back with
     * {@link #tagged} and route a request naming such an id here; no client can make one name another address.
     */
    public String tag(String address) {
        String named = nodeId + TAG + address;
        return named + TAG + tagMac(named) + TAG;
    }

    /** The node a tagged id names, if its tag was sealed with this secret. */
    public Optional<Router.Remote> tagged(String id) {
        if (id == null) {
            return Optional.empty();
        }
        String[] parts = id.split(TAG, 4);
        if (parts.length < 4 || parts[0].isEmpty() || parts[1].isEmpty()) {
            return Optional.empty();
        }
        byte[] expected = tagMac(parts[0] + TAG + parts[1]).getBytes(StandardCharsets.US_ASCII);
        return MessageDigest.isEqual(expected, parts[2].getBytes(StandardCharsets.US_ASCII))
                ? Optional.of(new Router.Remote(parts[0], parts[1]))
                : Optional.empty();
    }

    private String tagMac(String named) {
        // a message no request signature has (those start with a node id, which has no newline)
        return HexFormat.of().formatHex(mac("tag\n" + named)).substring(0, 32);
    }

    @Override
    public String toString() {
        return "PeerAuth[" + nodeId + "]"; // never the secret
    }
}
