#!/usr/bin/python3
"""How much two or more profiles of the same cluster disagree, per device.

Each profile (`shoal profile MODEL --cluster FILE -o P.json`, taken one
after another on the same running cluster) gives every layer variant a
time: its CPU time per run under a quota, else its wall time. For each
device this prints

  scales: each profile's overall speed against the others' (the median,
          over variants, of its time / the variants' median time);
  residual spread: per variant, max/min - 1 of its times once each
          profile's scale is divided out (what moves one variant against
          another, which a uniform drift of the host does not explain):
          the median and 90th percentile over variants, and the worst.

  /usr/bin/python3 bench/profile_spread.py a.json b.json [c.json ...]
"""
import json
import statistics
import sys


def times(device):
    return {(s['layer'], s['variant']): s.get('cpu_seconds') or s['seconds']
            for s in device['samples']}


def main(paths):
    if len(paths) < 2:
        sys.exit('usage: profile_spread.py PROFILE PROFILE [PROFILE ...]')
    profiles = [json.load(open(p)) for p in paths]
    for device in profiles[0]['devices']:
        name = device['name']
        per = []
        for p in profiles:
            d = next((x for x in p['devices'] if x['name'] == name), None)
            if d is None:
                sys.exit('%s: no device %s' % (paths[profiles.index(p)], name))
            per.append(times(d))
        keys = [k for k in per[0]
                if all(k in t and t[k] > 0 for t in per)]
        if not keys:
            print('%s: no variant timed in every profile' % name)
            continue
        ratios = [[t[k] / statistics.median([u[k] for u in per])
                   for k in keys] for t in per]
        scale = [statistics.median(r) for r in ratios]
        spread = sorted(
            (max(t[k] / s for t, s in zip(per, scale)) /
             min(t[k] / s for t, s in zip(per, scale)) - 1, k)
            for k in keys)
        worst = spread[-1]
        print('%-10s scales %s  residual spread: median %.3f, p90 %.3f, '
              'worst %.3f (%s %s)' % (
                  name, ' '.join('%.3f' % s for s in scale),
                  spread[len(spread) // 2][0],
                  spread[int(len(spread) * 0.9)][0], worst[0], *worst[1]))


if __name__ == '__main__':
    main(sys.argv[1:])
