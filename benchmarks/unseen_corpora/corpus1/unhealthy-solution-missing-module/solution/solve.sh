#!/bin/bash
set -e
python3 -c "import pandas as pd; pd.read_csv('/app/sales.csv').groupby('region', as_index=False)['amount'].sum().to_csv('/app/by_region.csv', index=False)"
