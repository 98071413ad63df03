"""The fact tables' TSV: rendered per file without `csv`, and still what `csv` writes."""

import csv
import io

import pytest

from adopter.extract.tables import TableWriter, read_tables, table_rows, table_text, with_file_column, write_tables
from adopter.extract.python_facts import extract_source
from adopter.extract.schema import RELATIONS

SOURCE = 'import torch\nx = \'say "hi"\'\ny = torch.relu(x)  # plain\n'


def csv_lines(facts) -> dict[str, str]:
    out = {}
    for relation, rows in facts.rows.items():
        if rows:
            buffer = io.StringIO()
            csv.writer(buffer, delimiter="\t", lineterminator="\n").writerows((facts.path,) + row for row in rows)
            out[relation] = buffer.getvalue()
    return out


def test_table_text_is_what_csv_writes():
    facts = extract_source(SOURCE + 'z = "100%s %d"\n', 'dir/my "model"\t100%s v2.py')  # `%` in the path and a field
    assert any('"' in row[1] for row in facts.rows["constant"])  # fields that need quoting: a constant, the path
    assert table_text(facts) == csv_lines(facts)


def test_rows_take_the_file_column_also_after_a_quoted_newline():
    # a field or the path may hold a line break (quoted): the path goes only where a row starts
    facts = extract_source("x = 1\ny = 2\n", "dir/new\nline.py")
    facts.rows["constant"][0] = (facts.rows["constant"][0][0], "a\nb")
    assert with_file_column(facts.path, table_rows(facts)) == csv_lines(facts)
    assert table_text(facts)["constant"].count("\n") == 2 * 2 + 1  # two rows: the path's, the field's and the ends


def test_a_field_holding_a_nul_is_refused_not_written_as_two_rows():
    facts = extract_source("x = 1\n", "m.py")
    facts.rows["constant"] = [(facts.rows["constant"][0][0], "a\0b")]
    with pytest.raises(ValueError, match="NUL"):
        table_rows(facts)


def test_tables_round_trip_with_carriage_return(tmp_path):
    # csv leaves a bare "\r" unquoted, where a reader may end the line: table_text quotes it
    facts = extract_source("s = 1\n", "c\r.py")
    assert table_text(facts)["constant"].startswith('"c\r.py"\t')
    write_tables([facts], tmp_path)
    (back,) = read_tables(tmp_path)
    assert {name: sorted(rows) for name, rows in back.rows.items() if rows} == \
        {name: sorted(rows) for name, rows in facts.rows.items() if rows}
    assert set(back.rows) <= set(RELATIONS)


def test_files_added_out_of_order_are_written_in_the_order_of_their_positions(tmp_path):
    # workers finish in any order: the tables must not depend on it
    files = [extract_source(f"x{i} = {i}\n", f"f{i}.py") for i in range(3)]
    writer = TableWriter(tmp_path)
    for position in (2, 0, 1):
        writer.add(files[position], position)
    writer.commit()
    lines = (tmp_path / "constant.tsv").read_text().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["file", "f0.py", "f1.py", "f2.py"]
    assert not list(tmp_path.glob(".*"))  # no temporary file left
