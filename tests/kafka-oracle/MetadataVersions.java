// Prints every metadata.version a Kafka release knows, one per line:
// "<feature level> <version>" (e.g. "7 3.3-IV3"). gen_schema_tables.py runs
// it against the newest release's jars and the 3.9 ones (4.x dropped the
// levels below 3.3-IV3) to generate the feature level -> release line table
// of `klf dump --kafka-version auto`. Levels below 1 (the ZooKeeper-era
// inter-broker protocol versions) print as -1.
import org.apache.kafka.server.common.MetadataVersion;

public class MetadataVersions {
    public static void main(String[] args) {
        for (MetadataVersion v : MetadataVersion.values()) {
            System.out.println(v.featureLevel() + " " + v.version());
        }
    }
}
