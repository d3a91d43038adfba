//! The map data (spec §2, §10): the bundled stand-in parses, has the spec's shape, and keeps its
//! properties under all 720 arrangements.

use super::*;

fn permutations(items: Vec<usize>) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items];
    }
    let mut all = Vec::new();
    for i in 0..items.len() {
        let mut rest = items.clone();
        let first = rest.remove(i);
        for mut tail in permutations(rest) {
            tail.insert(0, first);
            all.push(tail);
        }
    }
    all
}

#[test]
fn the_bundled_map_loads_and_is_consistent() {
    // The same map setup checks for and every rule reads: loading it is not left to a panic.
    let map = bundled_map().expect("the bundled stand-in loads");
    assert!(std::ptr::eq(map, &*MAP), "the rules read the bundled map");
    assert!(
        map.provisional,
        "the stand-in must stay labelled provisional"
    );
    assert!(map.name.contains("stand-in"));
    assert_eq!(map.radius, 7);
    assert_eq!(map.hexes.len(), 169);
    assert_eq!(map.pieces.len(), 6);
    assert_eq!(map.pieces[map.start_piece].name, "A");
    assert_eq!(map.centre, Terrain::Site);
    let count = |kind| map.settlement_tiles.iter().filter(|k| **k == kind).count();
    assert_eq!(
        [
            count(SettlementKind::City),
            count(SettlementKind::Town),
            count(SettlementKind::Village),
            count(SettlementKind::Hamlet)
        ],
        [4, 5, 5, 5]
    );
    assert_eq!(map.seating_for(2), ["North", "South"]);
    assert_eq!(map.seating_for(4), ["North", "East", "South", "West"]);
    for (id, axial) in map.hexes.iter().enumerate() {
        assert_eq!(map.id_of(*axial), Some(id as HexId));
        for d in 0..6 {
            if let Some(n) = map.neighbour(id as HexId, d) {
                assert_eq!(
                    map.neighbour(n, (d + 3) % 6),
                    Some(id as HexId),
                    "neighbours are symmetric"
                );
            }
        }
    }
    assert_eq!(map.id_of(Axial::new(8, 0)), None);
    assert_eq!(map.id_of(Axial::new(i32::MIN, i32::MAX)), None);
    // A broken file is refused, not half-loaded.
    let broken = STANDIN_MAP_JSON.replace("\"PPHPPFP\"", "\"PPHPPF\"");
    assert!(MapData::parse(&broken).is_err());
    let extra_site = STANDIN_MAP_JSON.replace("\"PPHPPFP\"", "\"PPHPPFC\"");
    assert!(MapData::parse(&extra_site).unwrap_err().contains("sites"));
}

#[test]
fn every_piece_has_the_spec_shape() {
    let expected = [
        ("A", [15, 6, 4]),
        ("B", [14, 7, 4]),
        ("C", [15, 6, 4]),
        ("D", [14, 7, 4]),
        ("E", [15, 6, 4]),
        ("F", [14, 7, 4]),
    ];
    for (piece, (name, counts)) in MAP.pieces.iter().zip(expected) {
        assert_eq!(piece.name, name);
        let cells: Vec<Terrain> = piece.rows.iter().flatten().copied().collect();
        assert_eq!(cells.len(), 28);
        let count = |t| cells.iter().filter(|c| **c == t).count();
        assert_eq!(
            [
                count(Terrain::Plains),
                count(Terrain::Forest),
                count(Terrain::Hill)
            ],
            counts,
            "piece {name}"
        );
        assert_eq!(count(Terrain::Site), 3, "piece {name}");
        for (row, cells) in piece.rows.iter().enumerate() {
            let n = row + 1;
            for (b, cell) in cells.iter().enumerate() {
                if *cell == Terrain::Site {
                    let a = n - b;
                    assert!(
                        a >= 2 && b >= 1 && (3..=6).contains(&n),
                        "piece {name}: site at a={a} b={b}"
                    );
                }
            }
        }
    }
}

#[test]
fn all_720_arrangements_keep_the_map_properties() {
    let arrangements = permutations((0..6).collect());
    assert_eq!(arrangements.len(), 720);
    for arrangement in arrangements {
        let arrangement: [usize; POSITIONS] = arrangement.try_into().expect("six");
        let (terrain, owner) = MAP.lay_out(&arrangement);
        let count = |t| terrain.iter().filter(|c| **c == t).count();
        assert_eq!(
            [
                count(Terrain::Plains),
                count(Terrain::Forest),
                count(Terrain::Hill),
                count(Terrain::Site)
            ],
            [87, 39, 24, 19],
            "{arrangement:?}"
        );
        // Every piece covers its 28 hexes (the start piece also the centre).
        for piece in 0..6 {
            let hexes = owner.iter().filter(|o| usize::from(**o) == piece).count();
            assert_eq!(hexes, if piece == MAP.start_piece { 29 } else { 28 });
        }
        let sites: Vec<Axial> = (0..terrain.len())
            .filter(|h| terrain[*h] == Terrain::Site)
            .map(|h| MAP.hex(h as HexId))
            .collect();
        let mut closest = i64::MAX;
        for (i, a) in sites.iter().enumerate() {
            for b in &sites[i + 1..] {
                closest = closest.min(a.distance(*b));
            }
        }
        assert_eq!(closest, 2, "{arrangement:?}: sites adjacent or too sparse");
        let mut rings = [0; 8];
        for site in &sites {
            rings[site.ring() as usize] += 1;
        }
        assert_eq!(rings, [1, 0, 0, 3, 3, 5, 7, 0], "{arrangement:?}");
    }
}

#[test]
fn the_default_arrangement_is_the_spec_table() {
    // Spec §10 "Default arrangement", row by row (terrain, then owning piece).
    let table = [
        ("PFPPHFPP", "CBBBBBBB"),
        ("PPPCPFCHP", "CCBBBBBBA"),
        ("FFHFPHPPHF", "CCCBBBBBAA"),
        ("HPPPPHCPFPP", "CCCCBBBBAAA"),
        ("PPCPPPFFHCFP", "CCCCCBBBAAAA"),
        ("FCPFCPPFPPPFH", "CCCCCCBBAAAAA"),
        ("PHPFFPHPPCFPCP", "CCCCCCCBAAAAAA"),
        ("PFPFPPPCPPFPHPP", "DDDDDDDAAAAAAAA"),
        ("HPCPHFPFFPPFFP", "DDDDDDEFFFFFFF"),
        ("PHFCPHPPFFCPP", "DDDDDEEFFFFFF"),
        ("FCFPPCPPCPHH", "DDDDEEEFFFFF"),
        ("PPHFPPHPPPP", "DDDEEEEFFFF"),
        ("PPHFPCPHCF", "DDEEEEEFFF"),
        ("FPFCFPPPP", "DEEEEEEFF"),
        ("HPPFPFPH", "EEEEEEEF"),
    ];
    let (terrain, owner) = MAP.lay_out(&MapData::default_arrangement());
    let letter = |t: Terrain| match t {
        Terrain::Plains => 'P',
        Terrain::Forest => 'F',
        Terrain::Hill => 'H',
        Terrain::Site => 'C',
    };
    let mut id = 0;
    for (row, (letters, pieces)) in table.iter().enumerate() {
        let r = row as i32 - 7;
        for (column, (l, p)) in letters.chars().zip(pieces.chars()).enumerate() {
            let q = (-7).max(-7 - r) + column as i32;
            assert_eq!(MAP.id_of(Axial::new(q, r)), Some(id));
            assert_eq!(letter(terrain[id as usize]), l, "({q}, {r})");
            assert_eq!(
                MAP.pieces[usize::from(owner[id as usize])].name,
                p.to_string(),
                "({q}, {r})"
            );
            id += 1;
        }
    }
    assert_eq!(id, 169);
}
