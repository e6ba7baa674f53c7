package dev.rlmmcp.store.pg;

import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.Properties;

/**
 * A PostgreSQL address as the operator gives it ({@code postgresql://user:password@host:port/db?...},
 * {@code postgres://...} or a JDBC URL {@code jdbc:postgresql://...}) turned into the driver's URL and
 * credentials. {@link #toString} masks the password: the only form that may be logged.
 */
record PgUrl(String jdbc, String user, String password, String shown) {

    static PgUrl parse(String url) {
        String v = url == null ? "" : url.strip();
        if (v.startsWith("jdbc:postgresql://")) {
            return new PgUrl(v, null, null, v.replaceAll("(?i)(password=)[^&]*", "$1***"));
        }
        if (!v.startsWith("postgresql://") && !v.startsWith("postgres://")) {
            throw new IllegalArgumentException("--cluster-db: '" + masked(v)
                    + "' is not a PostgreSQL URL; give postgresql://user:password@host:port/database");
        }
        URI uri;
        try {
            uri = new URI(v);
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(
                    "--cluster-db: '" + masked(v) + "' is not a valid URL: " + e.getReason(), e);
        }
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("--cluster-db: '" + masked(v) + "' names no host");
        }
        String database = uri.getRawPath() == null || uri.getRawPath().length() <= 1
                ? "postgres"
                : uri.getRawPath().substring(1);
        String jdbc = "jdbc:postgresql://" + (uri.getHost().contains(":") ? "[" + uri.getHost() + "]" : uri.getHost())
                + (uri.getPort() < 0 ? "" : ":" + uri.getPort()) + "/" + database
                + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
        String user = null;
        String password = null;
        String info = uri.getRawUserInfo();
        if (info != null) {
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon));
            password = colon < 0 ? null : decode(info.substring(colon + 1));
        }
        return new PgUrl(jdbc, user, password, masked(v));
    }

    /** The driver's connection properties: the credentials, if the URL gave them. */
    Properties properties() {
        Properties p = new Properties();
        if (user != null) {
            p.setProperty("user", user);
        }
        if (password != null) {
            p.setProperty("password", password);
        }
        return p;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    /** The URL with the password in its user info replaced by {@code ***}. */
    static String masked(String url) {
        return url.replaceAll("^([a-z]+://[^:/@]*):[^@/]*@", "$1:***@").replaceAll("(?i)(password=)[^&]*", "$1***");
    }

    @Override
    public String toString() {
        return shown;
    }
}
