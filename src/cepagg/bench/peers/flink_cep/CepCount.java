// cepagg bench peers: count the matches of a pattern with Flink CEP (enumerate, then count).
//
// Usage: java -cp "<pyflink/lib>/*:<classes>" CepCount --csv FILE --pattern SPEC
//            --strategy any|next|strict --within MS [--key] [--parallelism N]
//
// The CSV has the header "ts,type,key,price"; ts are integer milliseconds (event time).
// SPEC is the pattern as items separated by ';': "A" (one event of type A), "B+" (one or more
// B), "!N" (no N between the neighbours), "S+<price" (one or more S, each with a lower price
// than the previous one of the same run); "*" as the type: any event. An item may end with
// "@" and comma-separated conditions on each event it takes, ATTR OP REF.ATTR with OP "<" or
// ">" and REF "prev" (the previous event of this item's run), "vN" (the event of item N) or
// "first(vN)" (the first event of item N's run): RCEP's Query 1 is
// "*;*+@price>v0.price,price>prev.price;*@price<first(v1).price". Conditions read the partial
// match through ctx.getEventsForPattern. The strategy maps to Flink's contiguity:
//   any    -> followedByAny / notFollowedBy, oneOrMore().allowCombinations()
//   next   -> followedBy / notFollowedBy, oneOrMore() (relaxed)
//   strict -> next / notNext, oneOrMore().consecutive()
// Every match is handed to a PatternProcessFunction (Flink builds the Map<String, List<Event>>)
// and counted there. It prints one line: PEER-RESULT {"count": N, "net_runtime_ms": T, ...}
// (net_runtime_ms: the job's run time, reading the CSV included; elapsed_ms adds the start of
// the local MiniCluster).
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.java.functions.KeySelector;
import org.apache.flink.cep.CEP;
import org.apache.flink.cep.PatternStream;
import org.apache.flink.cep.functions.PatternProcessFunction;
import org.apache.flink.cep.pattern.Pattern;
import org.apache.flink.cep.pattern.WithinType;
import org.apache.flink.cep.pattern.conditions.IterativeCondition;
import org.apache.flink.connector.file.src.FileSource;
import org.apache.flink.connector.file.src.reader.TextLineInputFormat;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.Collector;

public class CepCount {

    /** One event: a POJO, so Flink serializes it without Kryo. */
    public static class Event {
        public long ts;
        public String type;
        public String key;
        public double price;

        public Event() {}

        public Event(long ts, String type, String key, double price) {
            this.ts = ts;
            this.type = type;
            this.key = key;
            this.price = price;
        }
    }

    static final AtomicLong MATCHES = new AtomicLong();
    static final AtomicLong EVENTS = new AtomicLong();

    static class Item {
        String type;
        boolean kleene;
        boolean negated;
        String decreasing;  // attribute that must decrease along a Kleene run, or null
        List<Compare> where = new ArrayList<>();
    }

    /** this event's price OP the price of ref: "prev", "vN" or "first(vN)". */
    static class Compare implements java.io.Serializable {
        char op;
        String ref;
        boolean first;
    }

    static Compare parseCompare(String s) {
        // ATTR OP REF.ATTR; only price is compared
        int at = Math.max(s.indexOf('<'), s.indexOf('>'));
        if (at < 0 || !s.substring(0, at).equals("price") || !s.endsWith(".price")) {
            throw new IllegalArgumentException("condition must be price<REF.price or price>REF.price: " + s);
        }
        Compare c = new Compare();
        c.op = s.charAt(at);
        String ref = s.substring(at + 1, s.length() - ".price".length());
        if (ref.startsWith("first(") && ref.endsWith(")")) {
            c.first = true;
            ref = ref.substring(6, ref.length() - 1);
        }
        c.ref = ref;
        return c;
    }

    static List<Item> parseSpec(String spec) {
        List<Item> items = new ArrayList<>();
        for (String raw : spec.split(";")) {
            String s = raw.trim();
            Item it = new Item();
            int atSign = s.indexOf('@');
            if (atSign >= 0) {
                for (String c : s.substring(atSign + 1).split(",")) {
                    it.where.add(parseCompare(c.trim()));
                }
                s = s.substring(0, atSign);
            }
            if (s.startsWith("!")) {
                it.negated = true;
                s = s.substring(1);
            }
            int lt = s.indexOf('<');
            if (lt >= 0) {
                it.decreasing = s.substring(lt + 1);
                s = s.substring(0, lt);
            }
            if (s.endsWith("+")) {
                it.kleene = true;
                s = s.substring(0, s.length() - 1);
            }
            it.type = s;
            items.add(it);
        }
        return items;
    }

    /** The event of the partial match that ref names: the latest of its run (prev, vN), or the
     *  earliest (first(vN)); null when it has none yet. */
    static Event refEvent(Iterable<Event> events, boolean first) {
        Event found = null;
        for (Event e : events) {
            if (found == null || (first ? e.ts < found.ts : e.ts > found.ts)) {
                found = e;
            }
        }
        return found;
    }

    static IterativeCondition<Event> condition(final String name, final Item it) {
        final String type = it.type;
        final boolean any = type.equals("*");
        if (!it.where.isEmpty()) {
            if (it.decreasing != null) {
                throw new IllegalArgumentException("an item has either <attr or @conditions");
            }
            final List<Compare> where = it.where;
            return new IterativeCondition<Event>() {
                @Override
                public boolean filter(Event e, Context<Event> ctx) throws Exception {
                    if (!any && !type.equals(e.type)) {
                        return false;
                    }
                    for (Compare c : where) {
                        Event r = refEvent(ctx.getEventsForPattern(c.ref.equals("prev") ? name : c.ref),
                                           c.first);
                        if (r == null) {
                            if (c.ref.equals("prev")) {
                                continue;  // the first event of the run
                            }
                            throw new IllegalStateException("no event of " + c.ref + " before " + name);
                        }
                        if (c.op == '<' ? !(e.price < r.price) : !(e.price > r.price)) {
                            return false;
                        }
                    }
                    return true;
                }
            };
        }
        if (it.decreasing == null) {
            return new IterativeCondition<Event>() {
                @Override
                public boolean filter(Event e, Context<Event> ctx) {
                    return any || type.equals(e.type);
                }
            };
        }
        if (!it.decreasing.equals("price")) {
            throw new IllegalArgumentException("only 'price' can be compared: " + it.decreasing);
        }
        return new IterativeCondition<Event>() {
            @Override
            public boolean filter(Event e, Context<Event> ctx) throws Exception {
                if (!type.equals(e.type)) {
                    return false;
                }
                Event last = null;  // the latest event of this run in the partial match
                for (Event prev : ctx.getEventsForPattern(name)) {
                    if (last == null || prev.ts > last.ts) {
                        last = prev;
                    }
                }
                return last == null || last.price > e.price;
            }
        };
    }

    static Pattern<Event, Event> buildPattern(List<Item> items, String strategy, long withinMs) {
        Pattern<Event, Event> p = null;
        int i = 0;
        for (Item it : items) {
            String name = "v" + (i++);
            if (p == null) {
                if (it.negated) {
                    throw new IllegalArgumentException("a pattern cannot start with a negation");
                }
                p = Pattern.<Event>begin(name);
            } else if (it.negated) {
                p = strategy.equals("strict") ? p.notNext(name) : p.notFollowedBy(name);
            } else if (strategy.equals("any")) {
                p = p.followedByAny(name);
            } else if (strategy.equals("next")) {
                p = p.followedBy(name);
            } else if (strategy.equals("strict")) {
                p = p.next(name);
            } else {
                throw new IllegalArgumentException("strategy: any, next or strict, not " + strategy);
            }
            p = p.where(condition(name, it));
            if (it.kleene) {
                p = p.oneOrMore();
                if (strategy.equals("any")) {
                    p = p.allowCombinations();
                } else if (strategy.equals("strict")) {
                    p = p.consecutive();
                }
            }
        }
        if (withinMs > 0) {
            p = p.within(Duration.ofMillis(withinMs), WithinType.FIRST_AND_LAST);
        }
        return p;
    }

    public static void main(String[] args) throws Exception {
        String csv = null, spec = null, strategy = "any";
        long within = 0;
        boolean keyed = false;
        int parallelism = 1;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--csv": csv = args[++i]; break;
                case "--pattern": spec = args[++i]; break;
                case "--strategy": strategy = args[++i]; break;
                case "--within": within = Long.parseLong(args[++i]); break;
                case "--key": keyed = true; break;
                case "--parallelism": parallelism = Integer.parseInt(args[++i]); break;
                default: throw new IllegalArgumentException("unknown argument " + args[i]);
            }
        }
        if (csv == null || spec == null) {
            throw new IllegalArgumentException("--csv and --pattern are required");
        }
        List<Item> items = parseSpec(spec);
        Pattern<Event, Event> pattern = buildPattern(items, strategy, within);

        long t0 = System.nanoTime();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(parallelism);
        FileSource<String> source =
                FileSource.forRecordStreamFormat(new TextLineInputFormat(), new Path(csv)).build();
        DataStream<Event> events = env
                .fromSource(source, WatermarkStrategy.noWatermarks(), "csv")
                .setParallelism(1)
                .filter(line -> !line.startsWith("ts,"))
                .setParallelism(1)
                .map(new MapFunction<String, Event>() {
                    @Override
                    public Event map(String line) {
                        String[] f = line.split(",", -1);
                        EVENTS.incrementAndGet();
                        return new Event(Long.parseLong(f[0]), f[1], f[2],
                                f[3].isEmpty() ? Double.NaN : Double.parseDouble(f[3]));
                    }
                })
                .setParallelism(1)
                .assignTimestampsAndWatermarks(WatermarkStrategy
                        .<Event>forMonotonousTimestamps()
                        .withTimestampAssigner((e, ts) -> e.ts))
                .setParallelism(1);
        PatternStream<Event> matches = keyed
                ? CEP.pattern(events.keyBy(new KeySelector<Event, String>() {
                    @Override
                    public String getKey(Event e) {
                        return e.key;
                    }
                }), pattern)
                : CEP.pattern(events, pattern);
        matches.process(new PatternProcessFunction<Event, Long>() {
                    @Override
                    public void processMatch(Map<String, List<Event>> match, Context ctx,
                                             Collector<Long> out) {
                        MATCHES.incrementAndGet();
                    }
                })
                .sinkTo(new DiscardingSink<>());
        JobExecutionResult result = env.execute("cepagg-peers-flink-cep");
        long elapsedMs = (System.nanoTime() - t0) / 1_000_000;
        System.out.println("PEER-RESULT {\"peer\": \"flink-cep\", \"count\": " + MATCHES.get()
                + ", \"events\": " + EVENTS.get() + ", \"elapsed_ms\": " + elapsedMs
                + ", \"net_runtime_ms\": " + result.getNetRuntime()
                + ", \"strategy\": \"" + strategy + "\", \"parallelism\": " + parallelism + "}");
    }
}
