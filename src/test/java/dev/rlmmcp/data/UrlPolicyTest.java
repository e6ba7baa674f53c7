package dev.rlmmcp.data;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class UrlPolicyTest {

    private static InetAddress ip(String literal) throws Exception {
        return InetAddress.getByName(literal);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "127.0.0.1",
                "127.8.9.10",
                "::1",
                "10.1.2.3",
                "172.16.0.1",
                "172.31.255.255",
                "192.168.1.1",
                "169.254.169.254",
                "169.254.0.1",
                "fe80::1",
                "fc00::1",
                "fd00:ec2::254",
                "0.0.0.0",
                "::",
                "100.64.0.1",
                "224.0.0.1",
                "255.255.255.255",
                "::ffff:127.0.0.1",
                "::ffff:169.254.169.254",
                "::ffff:10.0.0.1",
                "192.0.0.170"
            })
    void nonPublicAddressesAreRefusedByDefault(String literal) throws Exception {
        assertThat(UrlPolicy.publicOnly().refusal("h", ip(literal))).as(literal).isNotNull();
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"93.184.215.14", "8.8.8.8", "2606:4700:4700::1111", "172.32.0.1", "100.128.0.1", "::ffff:8.8.8.8"
            })
    void publicAddressesAreAllowed(String literal) throws Exception {
        assertThat(UrlPolicy.publicOnly().refusal("h", ip(literal))).as(literal).isNull();
    }

    @Test
    void theMetadataServiceIsNamedInTheRefusal() throws Exception {
        assertThat(UrlPolicy.publicOnly().refusal("h", ip("169.254.169.254")))
                .contains("link-local")
                .contains("metadata");
        assertThat(UrlPolicy.publicOnly().refusal("h", ip("127.0.0.1"))).contains("loopback");
    }

    @Test
    void allowPrivateAllowsEverything() throws Exception {
        UrlPolicy open = UrlPolicy.of(true, List.of());
        assertThat(open.refusal("h", ip("127.0.0.1"))).isNull();
        assertThat(open.refusal("h", ip("169.254.169.254"))).isNull();
    }

    @Test
    void anAllowlistOpensOnlyItsNetworksAndHosts() throws Exception {
        UrlPolicy policy = UrlPolicy.of(false, List.of("10.1.0.0/16", "127.0.0.1", " Files.LAN "));
        assertThat(policy.refusal("h", ip("10.1.200.3"))).isNull();
        assertThat(policy.refusal("h", ip("10.2.0.1"))).isNotNull();
        assertThat(policy.refusal("h", ip("127.0.0.1"))).isNull();
        assertThat(policy.refusal("h", ip("::ffff:127.0.0.1"))).isNull();
        assertThat(policy.refusal("h", ip("127.0.0.2"))).isNotNull();
        assertThat(policy.refusal("files.lan", ip("192.168.7.7"))).isNull();
        assertThat(policy.refusal("other.lan", ip("192.168.7.7"))).isNotNull();
    }

    @Test
    void aBadAllowlistEntryIsRejected() {
        assertThatThrownBy(() -> UrlPolicy.of(false, List.of("10.0.0.0/40")))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> UrlPolicy.of(false, List.of("not a host/8")))
                .isInstanceOf(IllegalArgumentException.class);
    }
}
