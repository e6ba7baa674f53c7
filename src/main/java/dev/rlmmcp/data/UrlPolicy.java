package dev.rlmmcp.data;

import java.math.BigInteger;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Which addresses the server may fetch URLs from. Public unicast addresses always; loopback, private,
 * link-local (the cloud metadata service 169.254.169.254 among them), unique-local, carrier-grade NAT,
 * multicast and unspecified addresses only when allowed: all of them ({@code allowPrivate}), or those in
 * an allowed CIDR, or those a host named in the allowlist resolves to.
 */
public final class UrlPolicy {

    private final boolean allowPrivate;
    private final List<String> hosts;
    private final List<Cidr> networks;

    private UrlPolicy(boolean allowPrivate, List<String> hosts, List<Cidr> networks) {
        this.allowPrivate = allowPrivate;
        this.hosts = List.copyOf(hosts);
        this.networks = List.copyOf(networks);
    }

    static UrlPolicy publicOnly() {
        return new UrlPolicy(false, List.of(), List.of());
    }

    /**
     * A policy from the configuration: {@code allowPrivate}, and an allowlist of host names and CIDRs
     * (e.g. {@code files.internal, 10.1.0.0/16, 127.0.0.1/32}).
     */
    public static UrlPolicy of(boolean allowPrivate, List<String> allowlist) {
        List<String> hosts = new ArrayList<>();
        List<Cidr> networks = new ArrayList<>();
        for (String entry : allowlist) {
            String e = entry.strip().toLowerCase(Locale.ROOT);
            if (e.isEmpty()) {
                continue;
            }
            if (e.contains("/") || isLiteral(e)) {
                networks.add(Cidr.parse(e));
            } else {
                hosts.add(e);
            }
        }
        return new UrlPolicy(allowPrivate, hosts, networks);
    }

    /**
     * What kind of address {@code address} (reached by the name {@code host}) is, e.g. "a loopback
     * address", when a connection to it is refused; null if it is allowed.
     */
    public String refusal(String host, InetAddress address) {
        String kind = restrictedKind(address);
        if (kind == null || allowPrivate || hosts.contains(host.toLowerCase(Locale.ROOT))) {
            return null;
        }
        for (Cidr network : networks) {
            if (network.contains(address)) {
                return null;
            }
        }
        return kind;
    }

    /** What kind of non-public address this is, or null for a public unicast one. */
    static String restrictedKind(InetAddress address) {
        InetAddress a = unmapped(address);
        if (a.isLoopbackAddress()) {
            return "a loopback address";
        }
        if (a.isAnyLocalAddress()) {
            return "the unspecified address";
        }
        if (a.isLinkLocalAddress()) {
            return "a link-local address (the cloud metadata service lives there)";
        }
        if (a.isSiteLocalAddress()) {
            return "a private address";
        }
        if (a.isMulticastAddress()) {
            return "a multicast address";
        }
        return a instanceof Inet4Address ? restrictedV4(a.getAddress()) : restrictedV6(a.getAddress());
    }

    /** The special-purpose IPv4 ranges the JDK's address tests above do not cover. */
    private static String restrictedV4(byte[] b) {
        int first = b[0] & 0xff;
        int second = b[1] & 0xff;
        if (first == 0) {
            return "in 0.0.0.0/8 (this network)";
        }
        if (first == 100 && second >= 64 && second < 128) {
            return "a carrier-grade NAT address";
        }
        if (first == 192 && second == 0 && (b[2] & 0xff) == 0) {
            return "an IETF protocol address";
        }
        if (first == 198 && (second == 18 || second == 19)) {
            return "a benchmarking address";
        }
        if (first >= 240) {
            return "a reserved or broadcast address";
        }
        return null;
    }

    /** The IPv6 ranges the JDK's address tests above do not cover, some of which reach IPv4 hosts. */
    private static String restrictedV6(byte[] b) {
        if ((b[0] & 0xfe) == 0xfc) {
            return "a unique-local (private) address";
        }
        if ((b[0] & 0xff) == 0xfe && (b[1] & 0xc0) == 0xc0) {
            return "a site-local address";
        }
        if (b[0] == 0x20 && b[1] == 0x02) {
            return "a 6to4 address";
        }
        if (b[0] == 0 && b[1] == 0x64 && (b[2] & 0xff) == 0xff && (b[3] & 0xff) == 0x9b) {
            return "a NAT64 address";
        }
        return null;
    }

    /** The IPv4 address inside an IPv4-mapped or -compatible IPv6 address, else the address itself. */
    static InetAddress unmapped(InetAddress address) {
        if (!(address instanceof Inet6Address)) {
            return address;
        }
        byte[] b = address.getAddress();
        for (int i = 0; i < 10; i++) {
            if (b[i] != 0) {
                return address;
            }
        }
        boolean mapped = (b[10] & 0xff) == 0xff && (b[11] & 0xff) == 0xff;
        boolean compatible =
                b[10] == 0 && b[11] == 0 && !(b[12] == 0 && b[13] == 0 && b[14] == 0 && (b[15] & 0xfe) == 0);
        if (!mapped && !compatible) {
            return address;
        }
        try {
            return InetAddress.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    static boolean isLiteral(String host) {
        return host.matches("[0-9.]+") && host.chars().filter(c -> c == '.').count() == 3 || host.contains(":");
    }

    /** An address range: base and prefix length. */
    record Cidr(byte[] base, int bits) {

        static Cidr parse(String text) {
            String[] parts = text.split("/", 2);
            InetAddress address;
            try {
                if (!isLiteral(parts[0])) {
                    throw new IllegalArgumentException("'" + text + "' is not an IP address or CIDR");
                }
                address = InetAddress.getByName(parts[0]);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException("'" + text + "' is not an IP address or CIDR");
            }
            byte[] base = unmapped(address).getAddress();
            int bits = base.length * 8;
            if (parts.length == 2) {
                try {
                    bits = Integer.parseInt(parts[1]);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("'" + text + "' has a bad prefix length");
                }
                if (bits < 0 || bits > base.length * 8) {
                    throw new IllegalArgumentException("'" + text + "' has a prefix length out of range");
                }
            }
            return new Cidr(base, bits);
        }

        boolean contains(InetAddress address) {
            byte[] a = unmapped(address).getAddress();
            if (a.length != base.length) {
                return false;
            }
            BigInteger mask =
                    BigInteger.ONE.shiftLeft(bits).subtract(BigInteger.ONE).shiftLeft(a.length * 8 - bits);
            return new BigInteger(1, a).and(mask).equals(new BigInteger(1, base).and(mask));
        }
    }
}
