// Client-side driver for the oracle harness: everything the scenarios ask of a
// running cluster goes through Kafka's own client library (Admin, producers,
// consumers). Each command prints one JSON
// object on stdout; diagnostics go to stderr.
//
// Usage: java -cp '<kafka jars>:<classes>' Driver <command> [key=value ...]

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import org.apache.kafka.clients.admin.*;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.*;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.*;

public class Driver {
    static Map<String, String> args = new HashMap<>();

    static String arg(String k) {
        String v = args.get(k);
        if (v == null) throw new IllegalArgumentException("missing argument " + k);
        return v;
    }

    static String arg(String k, String dflt) {
        return args.getOrDefault(k, dflt);
    }

    static int iarg(String k, int dflt) {
        return Integer.parseInt(arg(k, Integer.toString(dflt)));
    }

    public static void main(String[] argv) throws Exception {
        String cmd = argv[0];
        for (int i = 1; i < argv.length; i++) {
            int eq = argv[i].indexOf('=');
            args.put(argv[i].substring(0, eq), argv[i].substring(eq + 1));
        }
        String out;
        switch (cmd) {
            case "ready": out = ready(); break;
            case "nodes": out = nodes(); break;
            case "delete-topic": out = deleteTopic(); break;
            case "create": out = create(); break;
            case "describe": out = describe(); break;
            case "offsets": out = offsets(); break;
            case "produce": out = produce(); break;
            case "txn": out = txn(); break;
            case "consume": out = consume(); break;
            case "read": out = read(); break;
            case "elect": out = elect(); break;
            case "alter-config": out = alterConfig(); break;
            case "share-consume": out = shareConsume(); break;
            case "share-group-offsets": out = shareGroupOffsets(); break;
            case "group-offsets": out = groupOffsets(); break;
            case "alter-offsets": out = alterOffsets(); break;
            case "resume": out = resume(); break;
            case "producers": out = producers(); break;
            case "txn-hold": out = txnHold(); break;
            case "produce-hold": out = produceHold(); break;
            case "replay": out = replay(); break;
            case "txn-wide": out = txnWide(); break;
            case "group-members": out = groupMembers(); break;
            case "streams": out = streams(); break;
            case "quorum": out = quorum(); break;
            case "add-voter": out = addVoter(); break;
            case "remove-voter": out = removeVoter(); break;
            default: throw new IllegalArgumentException("unknown command " + cmd);
        }
        System.out.println(out);
        System.out.flush();
        System.exit(0);
    }

    static Admin admin() {
        Properties p = new Properties();
        // bootstrap_controllers=HOST:PORT,...: the Admin client talks to the
        // KRaft controllers themselves (bootstrap.controllers), else to brokers
        if (args.containsKey("bootstrap_controllers"))
            p.put(AdminClientConfig.BOOTSTRAP_CONTROLLERS_CONFIG, arg("bootstrap_controllers"));
        else
            p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "5000");
        p.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "15000");
        return Admin.create(p);
    }

    static String q(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') b.append('\\').append(c);
            else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
            else b.append(c);
        }
        return b.append('"').toString();
    }

    static String ids(List<Node> nodes) {
        // a broker that has no such list (ELR before 4.0) says null
        if (nodes == null) return "null";
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (Node n : nodes) j.add(Integer.toString(n.id()));
        return j.toString();
    }

    // Waits until `brokers` brokers are registered and answering.
    static String ready() throws Exception {
        int want = iarg("brokers", 3);
        long deadline = System.currentTimeMillis() + iarg("timeout_ms", 60000);
        String last = "";
        while (System.currentTimeMillis() < deadline) {
            try (Admin a = admin()) {
                Collection<Node> nodes = a.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                if (nodes.size() >= want) return "{\"brokers\":" + nodes.size() + "}";
                last = "brokers=" + nodes.size();
            } catch (Exception e) {
                last = e.toString();
            }
            Thread.sleep(500);
        }
        throw new RuntimeException("cluster not ready: " + last);
    }

    // The brokers the cluster's metadata lists as alive (a broker killed in
    // ZooKeeper mode stays listed until its ZooKeeper session expires).
    static String nodes() throws Exception {
        try (Admin a = admin()) {
            List<Node> nodes = new ArrayList<>(a.describeCluster().nodes().get(10, TimeUnit.SECONDS));
            nodes.sort(Comparator.comparingInt(Node::id));
            return "{\"nodes\":" + ids(nodes) + "}";
        }
    }

    static String deleteTopic() throws Exception {
        try (Admin a = admin()) {
            a.deleteTopics(List.of(arg("topic"))).all().get(30, TimeUnit.SECONDS);
            return "{\"deleted\":" + q(arg("topic")) + "}";
        }
    }

    // assignment=1,2,3;2,3,1 (one replica list per partition, first is preferred leader)
    static String create() throws Exception {
        String topic = arg("topic");
        Map<Integer, List<Integer>> assign = new HashMap<>();
        String[] parts = arg("assignment").split(";");
        for (int p = 0; p < parts.length; p++) {
            List<Integer> r = new ArrayList<>();
            for (String s : parts[p].split(",")) r.add(Integer.parseInt(s.trim()));
            assign.put(p, r);
        }
        NewTopic nt = new NewTopic(topic, assign);
        Map<String, String> cfg = new HashMap<>();
        for (String kv : arg("config", "").split(",")) {
            if (kv.isEmpty()) continue;
            int eq = kv.indexOf('=');
            cfg.put(kv.substring(0, eq), kv.substring(eq + 1));
        }
        nt.configs(cfg);
        try (Admin a = admin()) {
            a.createTopics(List.of(nt)).all().get(30, TimeUnit.SECONDS);
            long deadline = System.currentTimeMillis() + 30000;
            while (true) {
                String state;
                try {
                    TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
                    boolean ok = true;
                    for (TopicPartitionInfo pi : d.partitions())
                        if (pi.leader() == null || pi.isr().size() != pi.replicas().size()) ok = false;
                    if (ok) break;
                    state = d.toString();
                } catch (ExecutionException e) {
                    // metadata not yet propagated to the broker that answered
                    state = e.getCause().toString();
                }
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("topic not ready: " + state);
                Thread.sleep(200);
            }
        }
        return "{\"created\":" + q(topic) + "}";
    }

    static String describe() throws Exception {
        String topic = arg("topic");
        try (Admin a = admin()) {
            TopicDescription d = a.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic);
            StringJoiner j = new StringJoiner(",", "{\"partitions\":[", "]}");
            for (TopicPartitionInfo pi : d.partitions()) {
                j.add("{\"partition\":" + pi.partition() + ",\"leader\":" + (pi.leader() == null || pi.leader().id() < 0 ? "null" : pi.leader().id())
                        + ",\"replicas\":" + ids(pi.replicas()) + ",\"isr\":" + ids(pi.isr())
                        + ",\"elr\":" + ids(pi.elr()) + "}");
            }
            return j.toString();
        }
    }

    // High watermark (latest, read_uncommitted), last stable offset (read_committed), log start.
    static String offsets() throws Exception {
        String topic = arg("topic");
        int partition = iarg("partition", 0);
        TopicPartition tp = new TopicPartition(topic, partition);
        try (Admin a = admin()) {
            ListOffsetsResult.ListOffsetsResultInfo hw = a.listOffsets(Map.of(tp, OffsetSpec.latest()),
                    new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).partitionResult(tp).get(15, TimeUnit.SECONDS);
            ListOffsetsResult.ListOffsetsResultInfo lso = a.listOffsets(Map.of(tp, OffsetSpec.latest()),
                    new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).partitionResult(tp).get(15, TimeUnit.SECONDS);
            ListOffsetsResult.ListOffsetsResultInfo start = a.listOffsets(Map.of(tp, OffsetSpec.earliest()))
                    .partitionResult(tp).get(15, TimeUnit.SECONDS);
            String local = "null";
            if (arg("earliest_local", "false").equals("true")) {
                // the first offset still in the leader's own log (KIP-1005): below
                // it, the log is in remote storage only
                local = Long.toString(a.listOffsets(Map.of(tp, OffsetSpec.earliestLocal()))
                        .partitionResult(tp).get(15, TimeUnit.SECONDS).offset());
            }
            return "{\"high_watermark\":" + hw.offset() + ",\"last_stable_offset\":" + lso.offset()
                    + ",\"log_start_offset\":" + start.offset() + ",\"earliest_local_offset\":" + local + "}";
        }
    }

    static byte[] value(int size, long i) {
        byte[] v = new byte[size];
        byte[] tag = ("v" + i + "-").getBytes(StandardCharsets.UTF_8);
        for (int k = 0; k < size; k++) v[k] = k < tag.length ? tag[k] : (byte) ('a' + (int) ((i + k) % 26));
        return v;
    }

    static Properties producerProps() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(ProducerConfig.ACKS_CONFIG, arg("acks", "all"));
        p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, arg("compression", "none"));
        p.put(ProducerConfig.LINGER_MS_CONFIG, arg("linger_ms", "5"));
        p.put(ProducerConfig.BATCH_SIZE_CONFIG, arg("batch_size", "4096"));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, arg("idempotent", "false"));
        p.put(ProducerConfig.RETRIES_CONFIG, arg("retries", "0"));
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, arg("max_in_flight", "1"));
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, arg("request_timeout_ms", "10000"));
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, arg("delivery_timeout_ms", "20000"));
        p.put(ProducerConfig.MAX_REQUEST_SIZE_CONFIG, arg("max_request_size", "2097152"));
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
        return p;
    }

    // Produces `count` records to one partition and reports what the producer was told:
    // how many sends were acknowledged, and their offsets.
    // keys=seq|null|mixed, values=fixed|null|mixed, headers=true|false
    static String produce() throws Exception {
        String topic = arg("topic");
        int partition = iarg("partition", 0);
        int count = iarg("count", 100);
        int valueSize = iarg("value_size", 100);
        String keys = arg("keys", "seq");
        String values = arg("values", "fixed");
        boolean headers = Boolean.parseBoolean(arg("headers", "false"));
        long base = Long.parseLong(arg("base", "0"));
        int bigEvery = iarg("big_every", 0);
        int bigSize = iarg("big_size", 0);
        AtomicLong acked = new AtomicLong(), failed = new AtomicLong();
        AtomicLong maxOffset = new AtomicLong(-1), minOffset = new AtomicLong(Long.MAX_VALUE);
        List<Long> ackedOffsets = Collections.synchronizedList(new ArrayList<>());
        // the record numbers (key-N with keys=seq) whose send was acknowledged
        Set<Long> ackedIds = Collections.synchronizedSet(new TreeSet<>());
        Set<String> errors = Collections.synchronizedSet(new TreeSet<>());
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(producerProps())) {
            if (Boolean.parseBoolean(arg("wait_stdin", "false"))) {
                // connect and learn the leader first, then send on the harness's signal,
                // so the window in which followers are paused stays short
                prod.partitionsFor(topic);
                System.out.println("{\"ready\":true}");
                System.out.flush();
                new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
            }
            for (long i = base; i < base + count; i++) {
                byte[] k = null;
                if (keys.equals("seq") || (keys.equals("mixed") && i % 3 != 0))
                    k = ("key-" + (keys.equals("mixed") ? i % 7 : i)).getBytes(StandardCharsets.UTF_8);
                if (keys.equals("repeat"))
                    k = ("key-" + i % 7).getBytes(StandardCharsets.UTF_8);
                byte[] v = value(valueSize, i);
                if (bigEvery > 0 && i % bigEvery == bigEvery - 1) v = value(bigSize, i);
                if (values.equals("null") || (values.equals("mixed") && i % 5 == 4)) v = null;
                ProducerRecord<byte[], byte[]> r = new ProducerRecord<>(topic, partition, null, k, v);
                final long id = i;
                if (headers && i % 2 == 0) {
                    r.headers().add(new RecordHeader("h-seq", Long.toString(i).getBytes(StandardCharsets.UTF_8)));
                    r.headers().add(new RecordHeader("h-null", null));
                }
                prod.send(r, (md, ex) -> {
                    if (ex == null) {
                        acked.incrementAndGet();
                        ackedOffsets.add(md.offset());
                        ackedIds.add(id);
                        maxOffset.accumulateAndGet(md.offset(), Math::max);
                        minOffset.accumulateAndGet(md.offset(), Math::min);
                    } else {
                        failed.incrementAndGet();
                        errors.add(ex.getClass().getSimpleName());
                    }
                });
                int pause = iarg("pause_every", 0);
                if (pause > 0 && (i - base) % pause == pause - 1) {
                    prod.flush();
                }
            }
            prod.flush();
        }
        StringJoiner ej = new StringJoiner(",", "[", "]");
        for (String e : errors) ej.add(q(e));
        return "{\"acks\":" + q(arg("acks", "all")) + ",\"acked\":" + acked.get() + ",\"failed\":" + failed.get() + ",\"max_offset\":" + maxOffset.get()
                + ",\"min_offset\":" + (acked.get() == 0 ? -1 : minOffset.get()) + ",\"errors\":" + ej
                + ",\"acked_ids\":" + runs(new TreeSet<>(ackedIds)) + "}";
    }

    // Transactional producer: plan is a comma list of commit:N / abort:N, each a transaction of N records.
    static String txn() throws Exception {
        String topic = arg("topic");
        int partition = iarg("partition", 0);
        Properties p = producerProps();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, arg("txn_id", "klf-txn"));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, "5");
        // records per outcome, and the transactions themselves
        int committed = 0, aborted = 0, commits = 0, aborts = 0;
        long i = 0;
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
            for (String step : arg("plan").split(",")) {
                String[] s = step.split(":");
                int n = Integer.parseInt(s[1]);
                prod.beginTransaction();
                for (int k = 0; k < n; k++, i++)
                    prod.send(new ProducerRecord<>(topic, partition, ("txn-" + i).getBytes(StandardCharsets.UTF_8), value(50, i)));
                prod.flush();
                if (s[0].equals("commit")) {
                    prod.commitTransaction();
                    committed += n;
                    commits++;
                } else {
                    prod.abortTransaction();
                    aborted += n;
                    aborts++;
                }
            }
            if (Boolean.parseBoolean(arg("leave_open", "false"))) {
                prod.beginTransaction();
                for (int k = 0; k < 3; k++, i++)
                    prod.send(new ProducerRecord<>(topic, partition, ("open-" + i).getBytes(StandardCharsets.UTF_8), value(20, i)));
                prod.flush();
                // exit without commit or abort: the transaction stays open until it times out
                System.out.println("{\"committed\":" + committed + ",\"aborted\":" + aborted + ",\"open\":3"
                        + ",\"transactions\":{\"committed\":" + commits + ",\"aborted\":" + aborts + ",\"open\":1}}");
                System.out.flush();
                Runtime.getRuntime().halt(0);
            }
        }
        return "{\"committed\":" + committed + ",\"aborted\":" + aborted + ",\"open\":0"
                + ",\"transactions\":{\"committed\":" + commits + ",\"aborted\":" + aborts + ",\"open\":0}}";
    }

    // Transactions over many partitions of several topics (topics=T:N,U:M):
    // each writes one record to every partition, so the transaction log
    // lists them all; plan=commit,abort,...; leave_open=true ends with one
    // left open (the producer halts).
    static String txnWide() throws Exception {
        Map<String, Integer> topics = new LinkedHashMap<>();
        for (String t : arg("topics").split(",")) {
            String[] a = t.split(":");
            topics.put(a[0], Integer.parseInt(a[1]));
        }
        Properties p = producerProps();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, arg("txn_id"));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, "5");
        int committed = 0, aborted = 0;
        long i = 0;
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
            List<String> steps = new ArrayList<>(Arrays.asList(arg("plan").split(",")));
            boolean open = Boolean.parseBoolean(arg("leave_open", "false"));
            if (open) steps.add("open");
            for (String step : steps) {
                prod.beginTransaction();
                int n = 0;
                for (Map.Entry<String, Integer> t : topics.entrySet())
                    for (int part = 0; part < t.getValue(); part++, i++, n++)
                        prod.send(new ProducerRecord<>(t.getKey(), part, ("wide-" + i).getBytes(StandardCharsets.UTF_8), value(30, i)));
                prod.flush();
                if (step.equals("commit")) {
                    prod.commitTransaction();
                    committed += n;
                } else if (step.equals("abort")) {
                    prod.abortTransaction();
                    aborted += n;
                } else {
                    System.out.println("{\"committed\":" + committed + ",\"aborted\":" + aborted + ",\"open\":" + n + "}");
                    System.out.flush();
                    Runtime.getRuntime().halt(0);
                }
            }
        }
        return "{\"committed\":" + committed + ",\"aborted\":" + aborted + ",\"open\":0}";
    }

    // members=N consumers of one group (protocol=classic|consumer), each on
    // its own thread, consume the topic and commit what they read; once
    // every member holds partitions and count records were read, they all
    // leave. The group's records in __consumer_offsets then list N members.
    static String groupMembers() throws Exception {
        int n = iarg("members", 3);
        int want = iarg("count", 1);
        AtomicInteger got = new AtomicInteger();
        AtomicBoolean stop = new AtomicBoolean();
        AtomicInteger assigned = new AtomicInteger();
        ConcurrentHashMap<String, Integer> sizes = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        List<Throwable> errors = Collections.synchronizedList(new ArrayList<>());
        for (int m = 0; m < n; m++) {
            final int id = m;
            Thread th = new Thread(() -> {
                Properties p = new Properties();
                p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
                p.put(ConsumerConfig.GROUP_ID_CONFIG, arg("group"));
                p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, arg("protocol", "classic"));
                p.put(ConsumerConfig.CLIENT_ID_CONFIG, arg("group") + "-member-" + id);
                p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
                p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
                p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
                boolean had = false;
                try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
                    c.subscribe(List.of(arg("topic")));
                    while (!stop.get()) {
                        ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(200));
                        Map<TopicPartition, OffsetAndMetadata> now = new HashMap<>();
                        for (ConsumerRecord<byte[], byte[]> r : rs)
                            now.put(new TopicPartition(r.topic(), r.partition()),
                                    new OffsetAndMetadata(r.offset() + 1, r.leaderEpoch(), ""));
                        if (!now.isEmpty()) {
                            c.commitSync(now);
                            got.addAndGet(rs.count());
                        }
                        boolean has = !c.assignment().isEmpty();
                        if (has != had) assigned.addAndGet(has ? 1 : -1);
                        had = has;
                        sizes.put("member-" + id, c.assignment().size());
                    }
                } catch (Throwable e) {
                    errors.add(e);
                }
            });
            th.start();
            threads.add(th);
        }
        long deadline = System.currentTimeMillis() + 90000;
        long steadySince = -1;
        while (System.currentTimeMillis() < deadline && errors.isEmpty()) {
            boolean ready = assigned.get() == n && got.get() >= want;
            if (ready && steadySince < 0) steadySince = System.currentTimeMillis();
            if (!ready) steadySince = -1;
            // every member assigned for a while: the group's state is stored
            if (steadySince > 0 && System.currentTimeMillis() - steadySince > 3000) break;
            Thread.sleep(100);
        }
        stop.set(true);
        for (Thread th : threads) th.join(60000);
        if (!errors.isEmpty()) throw new RuntimeException(errors.get(0));
        if (assigned.get() != n) throw new RuntimeException("only " + assigned.get() + " of " + n + " members were assigned partitions: " + sizes);
        return "{\"members\":" + n + ",\"consumed\":" + got.get() + "}";
    }

    // A Kafka Streams application (group.protocol=streams, KIP-1071) copies
    // topic to out_topic until it has processed count records: a streams
    // group's records in __consumer_offsets.
    static String streams() throws Exception {
        Properties p = new Properties();
        p.put(org.apache.kafka.streams.StreamsConfig.APPLICATION_ID_CONFIG, arg("application_id"));
        p.put(org.apache.kafka.streams.StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(org.apache.kafka.streams.StreamsConfig.GROUP_PROTOCOL_CONFIG, "streams");
        p.put(org.apache.kafka.streams.StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, "200");
        p.put(org.apache.kafka.streams.StreamsConfig.NUM_STREAM_THREADS_CONFIG, arg("threads", "2"));
        p.put(org.apache.kafka.streams.StreamsConfig.STATE_DIR_CONFIG, arg("state_dir"));
        p.put(org.apache.kafka.streams.StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        p.put(org.apache.kafka.streams.StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.ByteArraySerde.class.getName());
        p.put(org.apache.kafka.streams.StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        int want = iarg("count", 1);
        AtomicInteger seen = new AtomicInteger();
        org.apache.kafka.streams.StreamsBuilder b = new org.apache.kafka.streams.StreamsBuilder();
        b.<byte[], byte[]>stream(arg("topic"))
            .peek((k, v) -> seen.incrementAndGet())
            .to(arg("out_topic"));
        try (org.apache.kafka.streams.KafkaStreams ks = new org.apache.kafka.streams.KafkaStreams(b.build(), p)) {
            ks.start();
            long deadline = System.currentTimeMillis() + 90000;
            while (seen.get() < want && System.currentTimeMillis() < deadline) Thread.sleep(100);
            if (seen.get() < want) throw new RuntimeException("streams processed " + seen.get() + " of " + want + " records; state " + ks.state());
            // past a commit interval: the offsets are committed
            Thread.sleep(1500);
            ks.close(Duration.ofSeconds(30));
        }
        return "{\"processed\":" + seen.get() + "}";
    }

    // A consumer group reads the topic and commits offsets (fills __consumer_offsets).
    static String consume() throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, arg("group"));
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, arg("protocol", "classic"));
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, arg("isolation", "read_uncommitted"));
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        // count=-1: until the partition's end offset when the group was assigned
        int want = iarg("count", 10);
        boolean toEnd = want < 0;
        // until_offset=N: commit the records below N and stop
        long until = Long.parseLong(arg("until_offset", "-1"));
        boolean done = false;
        if (toEnd || until >= 0) want = Integer.MAX_VALUE;
        long endAt = -1;
        int got = 0;
        long deadline = System.currentTimeMillis() + 30000;
        // What the group commits: after each record processed, the next
        // offset with the epoch of the record's batch (as KafkaConsumer's
        // commitSync() does for what a poll returned), stopping at `count`.
        Map<TopicPartition, OffsetAndMetadata> last = new HashMap<>();
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(arg("topic")));
            while (got < want && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(500));
                Map<TopicPartition, OffsetAndMetadata> now = new HashMap<>();
                for (ConsumerRecord<byte[], byte[]> r : rs) {
                    if (got >= want) break;
                    if (until >= 0 && r.offset() >= until) {
                        done = true;
                        break;
                    }
                    got++;
                    now.put(new TopicPartition(r.topic(), r.partition()),
                            new OffsetAndMetadata(r.offset() + 1, r.leaderEpoch(), ""));
                }
                if (!now.isEmpty()) {
                    c.commitSync(now);
                    last.putAll(now);
                }
                if (done) break;
                if (toEnd && !c.assignment().isEmpty()) {
                    TopicPartition tp0 = c.assignment().iterator().next();
                    if (endAt < 0) endAt = c.endOffsets(List.of(tp0), Duration.ofSeconds(15)).get(tp0);
                    if (c.position(tp0, Duration.ofSeconds(15)) >= endAt) break;
                }
            }
        }
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (Map.Entry<TopicPartition, OffsetAndMetadata> e : last.entrySet())
            j.add("{\"partition\":" + e.getKey().partition() + ",\"offset\":" + e.getValue().offset()
                    + ",\"leader_epoch\":" + e.getValue().leaderEpoch().map(String::valueOf).orElse("null") + "}");
        return "{\"consumed\":" + got + ",\"committed\":" + j + "}";
    }

    // Inclusive runs [[a,b],...] of sorted numbers.
    static String runs(SortedSet<Long> ids) {
        StringJoiner j = new StringJoiner(",", "[", "]");
        long start = -1, prev = -2;
        for (long x : ids) {
            if (x != prev + 1) {
                if (start >= 0) j.add("[" + start + "," + prev + "]");
                start = x;
            }
            prev = x;
        }
        if (start >= 0) j.add("[" + start + "," + prev + "]");
        return j.toString();
    }

    // Reads one partition from its start to its high watermark without a
    // group (assign + seekToBeginning): what the cluster still has. Reports
    // the record numbers of keys key-N, and the count of other records.
    static String read() throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, arg("isolation", "read_uncommitted"));
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        TopicPartition tp = new TopicPartition(arg("topic"), iarg("partition", 0));
        SortedSet<Long> ids = new TreeSet<>(), dups = new TreeSet<>();
        long other = 0, count = 0, end;
        long deadline = System.currentTimeMillis() + iarg("timeout_ms", 60000);
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            end = c.endOffsets(List.of(tp), Duration.ofSeconds(30)).get(tp);
            while (c.position(tp, Duration.ofSeconds(30)) < end) {
                if (System.currentTimeMillis() > deadline) throw new RuntimeException("read did not reach " + end);
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    count++;
                    String k = r.key() == null ? null : new String(r.key(), StandardCharsets.UTF_8);
                    if (k != null && k.matches("key-[0-9]+")) {
                        if (!ids.add(Long.parseLong(k.substring(4)))) dups.add(Long.parseLong(k.substring(4)));
                    } else other++;
                }
            }
        }
        return "{\"end_offset\":" + end + ",\"records\":" + count + ",\"other\":" + other + ",\"ids\":" + runs(ids)
                + ",\"duplicate_ids\":" + runs(dups) + "}";
    }

    static String elect() throws Exception {
        String topic = arg("topic");
        int partition = iarg("partition", 0);
        ElectionType type = arg("type", "preferred").equals("unclean") ? ElectionType.UNCLEAN : ElectionType.PREFERRED;
        try (Admin a = admin()) {
            Map<TopicPartition, Optional<Throwable>> r = a.electLeaders(type, Set.of(new TopicPartition(topic, partition)))
                    .partitions().get(30, TimeUnit.SECONDS);
            Optional<Throwable> e = r.get(new TopicPartition(topic, partition));
            return "{\"error\":" + (e == null || e.isEmpty() ? "null" : q(e.get().toString())) + "}";
        }
    }

    static String alterConfig() throws Exception {
        // resource=group alters a group's configs (share groups), else the topic's
        ConfigResource res = arg("resource", "topic").equals("group")
                ? new ConfigResource(ConfigResource.Type.GROUP, arg("group"))
                : new ConfigResource(ConfigResource.Type.TOPIC, arg("topic"));
        List<AlterConfigOp> ops = new ArrayList<>();
        for (String kv : arg("config").split(",")) {
            int eq = kv.indexOf('=');
            ops.add(new AlterConfigOp(new ConfigEntry(kv.substring(0, eq), kv.substring(eq + 1)), AlterConfigOp.OpType.SET));
        }
        try (Admin a = admin()) {
            a.incrementalAlterConfigs(Map.of(res, ops)).all().get(15, TimeUnit.SECONDS);
        }
        return "{\"altered\":" + q(res.name()) + "}";
    }

    // A share group (KIP-932) consumes `count` records and acknowledges
    // them (commitSync after each poll): the share coordinator writes the
    // group's state into __share_group_state, the group coordinator its
    // metadata into __consumer_offsets.
    //
    // explicit=true acknowledges each record itself (share.acknowledgement.mode
    // explicit, share.acquire.mode record_limit with max.poll.records
    // `max_poll`): every record is accepted, but in the poll that brings a
    // record at or past `until_offset` the first `release_last` records are
    // released (AVAILABLE again) and the next `reject_last` rejected
    // (ARCHIVED), and the consumer stops there. count=-1 reads until nothing
    // comes for `idle_ms`. Reports the offsets accepted, rejected and
    // released (runs), those delivered more than once, and any error a
    // commit returned.
    static String shareConsume() throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, arg("group"));
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        boolean explicit = arg("explicit", "false").equals("true");
        if (explicit) {
            p.put(ConsumerConfig.SHARE_ACKNOWLEDGEMENT_MODE_CONFIG, "explicit");
            p.put("share.acquire.mode", "record_limit");   // 4.2 on
            p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, arg("max_poll", "10"));
        }
        int want = iarg("count", 10);
        long until = Long.parseLong(arg("until_offset", "-1"));
        int release = iarg("release_last", 0), reject = iarg("reject_last", 0);
        long idle = Long.parseLong(arg("idle_ms", "10000"));
        int got = 0;
        SortedSet<Long> accepted = new TreeSet<>(), rejected = new TreeSet<>(), released = new TreeSet<>();
        SortedSet<Long> redelivered = new TreeSet<>();
        List<String> errors = new ArrayList<>();
        long deadline = System.currentTimeMillis() + iarg("timeout_ms", 60000);
        long lastSeen = System.currentTimeMillis();
        try (KafkaShareConsumer<byte[], byte[]> c = new KafkaShareConsumer<>(p)) {
            c.subscribe(List.of(arg("topic")));
            boolean done = false;
            while (!done && (want < 0 || got < want) && System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> rs = c.poll(Duration.ofMillis(500));
                if (rs.count() == 0) {
                    if (want < 0 && System.currentTimeMillis() - lastSeen > idle) break;
                    continue;
                }
                lastSeen = System.currentTimeMillis();
                got += rs.count();
                if (explicit) {
                    List<ConsumerRecord<byte[], byte[]>> sorted = new ArrayList<>();
                    rs.forEach(sorted::add);
                    sorted.sort(Comparator.comparingLong(ConsumerRecord::offset));
                    boolean last = until >= 0 && sorted.get(sorted.size() - 1).offset() >= until;
                    int i = 0;
                    for (ConsumerRecord<byte[], byte[]> r : sorted) {
                        if (r.deliveryCount().orElse((short) 1) > 1) redelivered.add(r.offset());
                        AcknowledgeType t = AcknowledgeType.ACCEPT;
                        if (last && i < release) t = AcknowledgeType.RELEASE;
                        else if (last && i < release + reject) t = AcknowledgeType.REJECT;
                        c.acknowledge(r, t);
                        (t == AcknowledgeType.ACCEPT ? accepted : t == AcknowledgeType.REJECT ? rejected : released).add(r.offset());
                        i++;
                    }
                    done = last;
                }
                for (Map.Entry<TopicIdPartition, Optional<KafkaException>> e : c.commitSync().entrySet()) {
                    e.getValue().ifPresent(x -> errors.add(e.getKey() + ": " + x));
                }
            }
        }
        StringJoiner ej = new StringJoiner(",", "[", "]");
        for (String e : errors) ej.add(q(e));
        return "{\"consumed\":" + got + (explicit ? ",\"accepted\":" + runs(accepted) + ",\"rejected\":" + runs(rejected)
                + ",\"released\":" + runs(released) + ",\"redelivered\":" + runs(redelivered) : "")
                + ",\"commit_errors\":" + ej + "}";
    }

    // A share group's offsets as Kafka reports them after the incident
    // (Admin listShareGroupOffsets: what kafka-share-groups --describe
    // --offsets prints): start offset, leader epoch and lag per partition.
    static String shareGroupOffsets() throws Exception {
        String group = arg("group");
        try (Admin a = admin()) {
            // SharePartitionOffsetInfo (start offset, leader epoch, lag) from
            // 4.2, OffsetAndMetadata before: read either by name
            Map<TopicPartition, ?> m = a.listShareGroupOffsets(Map.of(group, new ListShareGroupOffsetsSpec()))
                    .all().get(30, TimeUnit.SECONDS).get(group);
            StringJoiner j = new StringJoiner(",", "[", "]");
            for (Map.Entry<TopicPartition, ?> e : m.entrySet()) {
                Object v = e.getValue();
                if (v == null) continue;
                Object start, epoch, lag = Optional.empty();
                try {
                    start = v.getClass().getMethod("startOffset").invoke(v);
                    lag = v.getClass().getMethod("lag").invoke(v);
                } catch (NoSuchMethodException x) {
                    start = v.getClass().getMethod("offset").invoke(v);
                }
                epoch = v.getClass().getMethod("leaderEpoch").invoke(v);
                j.add("{\"topic\":" + q(e.getKey().topic()) + ",\"partition\":" + e.getKey().partition()
                        + ",\"start_offset\":" + start
                        + ",\"leader_epoch\":" + ((Optional<?>) epoch).map(String::valueOf).orElse("null")
                        + ",\"lag\":" + ((Optional<?>) lag).map(String::valueOf).orElse("null") + "}");
            }
            return "{\"group\":" + q(group) + ",\"offsets\":" + j + "}";
        }
    }

    // What a group has committed (Admin listConsumerGroupOffsets, as
    // kafka-consumer-groups --describe reads it) and the group's type.
    static String groupOffsets() throws Exception {
        String group = arg("group");
        try (Admin a = admin()) {
            Map<TopicPartition, OffsetAndMetadata> m = a.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(15, TimeUnit.SECONDS);
            String type = "unknown";
            try {
                ConsumerGroupDescription d = a.describeConsumerGroups(List.of(group)).describedGroups().get(group).get(15, TimeUnit.SECONDS);
                type = d.type().toString();
            } catch (Exception e) {
                type = "unknown: " + e.getClass().getSimpleName();
            }
            StringJoiner j = new StringJoiner(",", "[", "]");
            for (Map.Entry<TopicPartition, OffsetAndMetadata> e : m.entrySet()) {
                if (e.getValue() == null) continue;
                j.add("{\"topic\":" + q(e.getKey().topic()) + ",\"partition\":" + e.getKey().partition()
                        + ",\"offset\":" + e.getValue().offset()
                        + ",\"leader_epoch\":" + e.getValue().leaderEpoch().map(String::valueOf).orElse("null") + "}");
            }
            return "{\"group\":" + q(group) + ",\"type\":" + q(type) + ",\"offsets\":" + j + "}";
        }
    }

    // Sets a group's committed offset with the Admin API: no leader epoch,
    // as kafka-consumer-groups --reset-offsets and most tooling commit.
    static String alterOffsets() throws Exception {
        TopicPartition tp = new TopicPartition(arg("topic"), iarg("partition", 0));
        long offset = Long.parseLong(arg("offset"));
        try (Admin a = admin()) {
            a.alterConsumerGroupOffsets(arg("group"), Map.of(tp, new OffsetAndMetadata(offset)))
                    .all().get(30, TimeUnit.SECONDS);
        }
        return "{\"group\":" + q(arg("group")) + ",\"offset\":" + offset + "}";
    }

    // A restarted consumer of a group: subscribes with auto.offset.reset=`reset`
    // and reports the offset of the first record it is given (or, when none
    // comes, the position it settled at) and any exception; commits nothing.
    static String resume() throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, arg("bootstrap"));
        p.put(ConsumerConfig.GROUP_ID_CONFIG, arg("group"));
        p.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, arg("protocol", "classic"));
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, arg("reset"));
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, arg("isolation", "read_uncommitted"));
        p.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        p.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        TopicPartition tp = new TopicPartition(arg("topic"), iarg("partition", 0));
        long deadline = System.currentTimeMillis() + iarg("timeout_ms", 30000);
        String first = "null", position = "null", error = "null", message = "null";
        long records = 0;
        try (KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(p)) {
            c.subscribe(List.of(tp.topic()));
            int quiet = 0;
            while (System.currentTimeMillis() < deadline) {
                ConsumerRecords<byte[], byte[]> rs;
                try {
                    rs = c.poll(Duration.ofMillis(500));
                } catch (KafkaException e) {
                    error = q(e.getClass().getSimpleName());
                    message = q(String.valueOf(e.getMessage()));
                    break;
                }
                for (ConsumerRecord<byte[], byte[]> r : rs.records(tp)) {
                    if (records == 0) first = Long.toString(r.offset());
                    records++;
                }
                if (records > 0) break;
                if (c.assignment().contains(tp)) {
                    // assigned and nothing to read: the position it fetches from
                    quiet++;
                    if (quiet >= 6) {
                        position = Long.toString(c.position(tp, Duration.ofSeconds(10)));
                        break;
                    }
                }
            }
        }
        return "{\"group\":" + q(arg("group")) + ",\"reset\":" + q(arg("reset")) + ",\"first_offset\":" + first
                + ",\"position_when_idle\":" + position + ",\"error\":" + error + ",\"message\":" + message + "}";
    }

    // The partition leader's producer state (Admin describeProducers, what
    // kafka-transactions describe-producers prints).
    static String producers() throws Exception {
        TopicPartition tp = new TopicPartition(arg("topic"), iarg("partition", 0));
        try (Admin a = admin()) {
            DescribeProducersResult.PartitionProducerState st = a.describeProducers(List.of(tp))
                    .partitionResult(tp).get(15, TimeUnit.SECONDS);
            StringJoiner j = new StringJoiner(",", "[", "]");
            for (ProducerState ps : st.activeProducers()) {
                j.add("{\"producer_id\":" + ps.producerId() + ",\"producer_epoch\":" + ps.producerEpoch()
                        + ",\"last_sequence\":" + ps.lastSequence()
                        + ",\"current_transaction_start_offset\":" + (ps.currentTransactionStartOffset().isPresent() ? ps.currentTransactionStartOffset().getAsLong() : -1) + "}");
            }
            return "{\"producers\":" + j + "}";
        }
    }

    // A transaction held open: begin, send `count` records, flush (acks=all),
    // print {"ready":...} and wait for a line on stdin, then commit or abort
    // (`end`) and report.
    static String txnHold() throws Exception {
        String topic = arg("topic");
        int partition = iarg("partition", 0);
        Properties p = producerProps();
        p.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, arg("txn_id"));
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, "5");
        p.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, arg("txn_timeout_ms", "60000"));
        int n = iarg("count", 5);
        long minOffset = Long.MAX_VALUE, maxOffset = -1;
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
            prod.initTransactions();
            prod.beginTransaction();
            List<Future<RecordMetadata>> fs = new ArrayList<>();
            for (int k = 0; k < n; k++)
                fs.add(prod.send(new ProducerRecord<>(topic, partition, ("held-" + k).getBytes(StandardCharsets.UTF_8), value(40, k))));
            prod.flush();
            for (Future<RecordMetadata> f : fs) {
                long o = f.get().offset();
                minOffset = Math.min(minOffset, o);
                maxOffset = Math.max(maxOffset, o);
            }
            System.out.println("{\"ready\":true,\"min_offset\":" + minOffset + ",\"max_offset\":" + maxOffset + "}");
            System.out.flush();
            new java.io.BufferedReader(new java.io.InputStreamReader(System.in)).readLine();
            String end = arg("end", "commit");
            if (end.equals("commit")) prod.commitTransaction();
            else prod.abortTransaction();
            return "{\"ended\":" + q(end) + ",\"records\":" + n + ",\"min_offset\":" + minOffset + ",\"max_offset\":" + maxOffset + "}";
        }
    }

    // An idempotent producer that lives through an incident: sends `count`
    // records (record numbers from `base`), prints {"ready":...} with what it
    // was told, waits for a line on stdin, then sends `then` more, one at a
    // time, and reports what each of those sends was told.
    static String produceHold() throws Exception {
        String topic = arg("topic");
        int partition = iarg("partition", 0);
        int then = iarg("then", 3);
        String[] phases = arg("counts", arg("count", "10")).split(",");
        long base = Long.parseLong(arg("base", "0"));
        Properties p = producerProps();
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, arg("retries", "3"));
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "1");
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, arg("delivery_timeout_ms", "30000"));
        long minOffset = Long.MAX_VALUE, maxOffset = -1;
        SortedSet<Long> ackedIds = new TreeSet<>();
        long next = base;
        int count = 0;
        java.io.BufferedReader stdin = new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p)) {
            for (String ph : phases) {
                int n = Integer.parseInt(ph.trim());
                List<Future<RecordMetadata>> fs = new ArrayList<>();
                long phMin = Long.MAX_VALUE, phMax = -1;
                for (long i = next; i < next + n; i++)
                    fs.add(prod.send(new ProducerRecord<>(topic, partition, ("key-" + i).getBytes(StandardCharsets.UTF_8), value(60, i))));
                prod.flush();
                long i = next;
                for (Future<RecordMetadata> f : fs) {
                    long o = f.get().offset();
                    phMin = Math.min(phMin, o);
                    phMax = Math.max(phMax, o);
                    ackedIds.add(i++);
                }
                minOffset = Math.min(minOffset, phMin);
                maxOffset = Math.max(maxOffset, phMax);
                System.out.println("{\"ready\":true,\"acked\":" + n + ",\"min_offset\":" + phMin + ",\"max_offset\":" + phMax
                        + ",\"acks\":\"all\",\"acked_ids\":[[" + next + "," + (next + n - 1) + "]]}");
                System.out.flush();
                next += n;
                count += n;
                stdin.readLine();
            }
            StringJoiner j = new StringJoiner(",", "[", "]");
            for (long k = next; k < next + then; k++) {
                String res;
                try {
                    RecordMetadata md = prod.send(new ProducerRecord<>(topic, partition, ("key-" + k).getBytes(StandardCharsets.UTF_8), value(60, k)))
                            .get(60, TimeUnit.SECONDS);
                    res = "{\"id\":" + k + ",\"offset\":" + md.offset() + ",\"error\":null}";
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    res = "{\"id\":" + k + ",\"offset\":null,\"error\":" + q(c.getClass().getSimpleName())
                            + ",\"message\":" + q(String.valueOf(c.getMessage())) + "}";
                }
                j.add(res);
            }
            return "{\"acked\":" + count + ",\"min_offset\":" + minOffset + ",\"max_offset\":" + maxOffset
                    + ",\"acked_ids\":" + runs(ackedIds) + ",\"then\":" + j + "}";
        }
    }

    static byte[] bytesOf(com.fasterxml.jackson.databind.JsonNode n) {
        if (n == null || n.isNull()) return null;
        if (n.has("text")) return n.get("text").asText().getBytes(StandardCharsets.UTF_8);
        return Base64.getDecoder().decode(n.get("base64").asText());
    }

    // Replays a `klf salvage` JSON Lines file into topic/partition with an
    // idempotent acks=all producer, as the README's recipe does: transaction
    // markers, aborted data and data of transactions without a marker are
    // not replayed.
    static String replay() throws Exception {
        String topic = arg("topic");
        int partition = iarg("partition", 0);
        Properties p = producerProps();
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.RETRIES_CONFIG, "5");
        p.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, "5");
        com.fasterxml.jackson.databind.ObjectMapper om = new com.fasterxml.jackson.databind.ObjectMapper();
        long sent = 0, skipped = 0;
        List<Future<RecordMetadata>> fs = new ArrayList<>();
        try (KafkaProducer<byte[], byte[]> prod = new KafkaProducer<>(p);
             java.io.BufferedReader in = java.nio.file.Files.newBufferedReader(java.nio.file.Paths.get(arg("file")))) {
            String line;
            while ((line = in.readLine()) != null) {
                com.fasterxml.jackson.databind.JsonNode r = om.readTree(line);
                String txn = r.get("transaction").isNull() ? null : r.get("transaction").asText();
                if (!r.get("control").isNull() || "aborted".equals(txn) || "open".equals(txn)) {
                    skipped++;
                    continue;
                }
                ProducerRecord<byte[], byte[]> pr = new ProducerRecord<>(topic, partition, r.get("timestamp").asLong(),
                        bytesOf(r.get("key")), bytesOf(r.get("value")));
                for (com.fasterxml.jackson.databind.JsonNode h : r.get("headers"))
                    pr.headers().add(new RecordHeader(h.get("key").asText(), bytesOf(h.get("value"))));
                fs.add(prod.send(pr));
                sent++;
            }
            prod.flush();
            for (Future<RecordMetadata> f : fs) f.get();
        }
        return "{\"replayed\":" + sent + ",\"skipped\":" + skipped + "}";
    }

    static String replicaStates(List<QuorumInfo.ReplicaState> rs) {
        List<QuorumInfo.ReplicaState> sorted = new ArrayList<>(rs);
        sorted.sort(Comparator.comparingInt(QuorumInfo.ReplicaState::replicaId));
        StringJoiner j = new StringJoiner(",", "[", "]");
        for (QuorumInfo.ReplicaState r : sorted) {
            Uuid dir = r.replicaDirectoryId();
            j.add("{\"id\":" + r.replicaId()
                    + ",\"directory_id\":" + (dir == null || dir.equals(Uuid.ZERO_UUID) ? "null" : q(dir.toString()))
                    + ",\"log_end_offset\":" + r.logEndOffset() + "}");
        }
        return j.toString();
    }

    // The KRaft controller quorum as Admin describeMetadataQuorum reports it
    // (as kafka-metadata-quorum describe --status / --replication shows it):
    // leader, its epoch, the high watermark, and each voter and observer
    // with its metadata log end offset as the leader knows it.
    static String quorum() throws Exception {
        try (Admin a = admin()) {
            QuorumInfo qi = a.describeMetadataQuorum().quorumInfo().get(15, TimeUnit.SECONDS);
            return "{\"leader_id\":" + qi.leaderId() + ",\"leader_epoch\":" + qi.leaderEpoch()
                    + ",\"high_watermark\":" + qi.highWatermark()
                    + ",\"voters\":" + replicaStates(qi.voters())
                    + ",\"observers\":" + replicaStates(qi.observers()) + "}";
        }
    }

    // Adds a controller to the voter set of a dynamic quorum (KIP-853), as
    // kafka-metadata-quorum add-controller does: id=N directory_id=UUID (the
    // directory.id of its metadata log directory's meta.properties)
    // host=H port=P listener=CONTROLLER.
    static String addVoter() throws Exception {
        int id = iarg("id", -1);
        Uuid dir = Uuid.fromString(arg("directory_id"));
        RaftVoterEndpoint ep = new RaftVoterEndpoint(arg("listener", "CONTROLLER"), arg("host", "127.0.0.1"),
                Integer.parseInt(arg("port")));
        try (Admin a = admin()) {
            a.addRaftVoter(id, dir, Set.of(ep)).all().get(30, TimeUnit.SECONDS);
            return "{\"added\":" + id + ",\"directory_id\":" + q(dir.toString()) + "}";
        }
    }

    // Removes a controller from the voter set (kafka-metadata-quorum
    // remove-controller): id=N directory_id=UUID.
    static String removeVoter() throws Exception {
        int id = iarg("id", -1);
        Uuid dir = Uuid.fromString(arg("directory_id"));
        try (Admin a = admin()) {
            a.removeRaftVoter(id, dir).all().get(30, TimeUnit.SECONDS);
            return "{\"removed\":" + id + ",\"directory_id\":" + q(dir.toString()) + "}";
        }
    }
}
