from pathlib import Path


def test_summary_exact():
    assert Path("/app/hr/dept_summary.csv").read_bytes().decode() == (
        "department,headcount,avg_salary,manager\n"
        "Engineering,13,100581.00,Mo Costa\n"
        "Facilities,0,0.00,Ben Fox\n"
        "Legal,8,86858.13,Mo Berg\n"
        "Research,7,108040.57,\n"
        "Sales,17,103198.24,Gus Gray\n"
        "Support,13,91540.62,Gus Gray\n"
        "(none),2,60000.00,\n"
    )
