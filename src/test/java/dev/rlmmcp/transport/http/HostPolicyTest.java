package dev.rlmmcp.transport.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HostPolicyTest {

    private static OriginHostFilter.HostPolicy policy(String host, Set<String> allowedHosts, Set<String> origins) {
        return HttpEndpoint.hostPolicy(new HttpSettings(
                host,
                0,
                1,
                null,
                allowedHosts,
                origins,
                Duration.ofMinutes(1),
                Duration.ofSeconds(15),
                (Path) null,
                Duration.ZERO));
    }

    @Test
    void onLoopbackOnlyLoopbackNamesAndListedHostsPass() {
        OriginHostFilter.HostPolicy p = policy("127.0.0.1", Set.of("rlm.internal"), Set.of());
        assertThat(p.hostAllowed("localhost:8765")).isTrue();
        assertThat(p.hostAllowed("127.0.0.1:8765")).isTrue();
        assertThat(p.hostAllowed("[::1]:8765")).isTrue();
        assertThat(p.hostAllowed("LOCALHOST")).isTrue();
        assertThat(p.hostAllowed("rlm.internal:80")).isTrue();
        assertThat(p.hostAllowed("evil.example.com")).isFalse();
        assertThat(p.hostAllowed("localhost.evil.example.com")).isFalse();
        assertThat(p.hostAllowed("127.0.0.1.nip.io")).isFalse();
    }

    @Test
    void originsMustBeLoopbackListedHostsOrCorsOrigins() {
        OriginHostFilter.HostPolicy p = policy("127.0.0.1", Set.of(), Set.of("https://app.example.com"));
        assertThat(p.originAllowed(null, "localhost")).isTrue();
        assertThat(p.originAllowed("http://localhost:3000", "localhost")).isTrue();
        assertThat(p.originAllowed("https://app.example.com", "localhost")).isTrue();
        assertThat(p.originAllowed("https://app.example.com.evil.io", "localhost"))
                .isFalse();
        assertThat(p.originAllowed("http://evil.example.com", "localhost")).isFalse();
        assertThat(p.originAllowed("null", "localhost")).isFalse();
        assertThat(p.originAllowed("file://", "localhost")).isFalse();
    }

    @Test
    void aWildcardBindWithoutAHostListChecksOnlySameOriginAndCors() {
        OriginHostFilter.HostPolicy p = policy("0.0.0.0", Set.of(), Set.of());
        assertThat(p.hostAllowed("10.0.0.5:8765")).isTrue();
        assertThat(p.originAllowed("http://10.0.0.5:8765", "10.0.0.5:8765")).isTrue();
        assertThat(p.originAllowed("http://evil.example.com", "10.0.0.5:8765")).isFalse();
    }

    @Test
    void aWildcardBindWithAHostListChecksIt() {
        OriginHostFilter.HostPolicy p = policy("0.0.0.0", Set.of("rlm.example.com"), Set.of());
        assertThat(p.hostAllowed("rlm.example.com:443")).isTrue();
        assertThat(p.hostAllowed("other.example.com")).isFalse();
    }

    @Test
    void hostNamesAreCutFromPorts() {
        assertThat(OriginHostFilter.HostPolicy.hostName("Example.COM:80")).isEqualTo("example.com");
        assertThat(OriginHostFilter.HostPolicy.hostName("[::1]:8080")).isEqualTo("[::1]");
        assertThat(OriginHostFilter.HostPolicy.hostName("localhost")).isEqualTo("localhost");
    }
}
