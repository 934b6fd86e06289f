"""Built-in trainables (LightGBM, XGBoost, CatBoost, a torch MLP), their datasets and context."""
